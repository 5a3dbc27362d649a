package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestPipelineMatchesReference compares results position by position with
// the reference engine.
func TestPipelineMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		size, target            int
		blob, bucketBlobs, jobs int
		lookups                 int // positions per ply looked up one by one
	}{
		{"fourxfour", 4, 12, 150, 3, 3, 60},
		{"sixxsix", 6, 8, 2000, 4, 4, 8},
		// A target ply with terminal positions among the others: it keeps
		// backtracking rows for its terminal positions only.
		{"fourxfournine", 4, 9, 100, 3, 2, 40},
		// Blobs of one position to the end of the 4x4 game, and of ten on
		// 6x6: thousands of final blobs, buckets and tasks per ply, which
		// the run store keeps as rows of their own (once a ceiling: the
		// ply record held every final blob's name).
		{"tinyblobsfour", 4, 12, 1, 4, 2, 5},
		{"tinyblobssix", 6, 6, 10, 64, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			be := teststore.Embedded(t)
			cfg := RunConfig{Name: tc.name, Config: runstore.Config{Board: tc.size, Target: tc.target, Sizes: runstore.Sizes{BlobPositions: tc.blob, BucketBlobs: tc.bucketBlobs}}}
			rep, err := RunLocal(ctx, be, cfg, tc.jobs, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := reference.Enumerate(board.MustNew(tc.size), tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Root != ref.Report.Root {
				t.Errorf("root %s, reference %s", rep.Root, ref.Report.Root)
			}
			r, err := OpenRun(ctx, be, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			for ply := 0; ply <= tc.target; ply++ {
				got, err := r.Results(ctx, ply)
				if err != nil {
					t.Fatal(err)
				}
				want := ref.Plies[ply]
				if len(got) != len(want) {
					t.Errorf("ply %d: %d positions, reference %d", ply, len(got), len(want))
				}
				bad := 0
				for p, w := range want {
					if g, ok := got[p]; !ok || g != w {
						if bad++; bad <= 3 {
							t.Errorf("ply %d %s: got %v (present %v), reference %v", ply, p.Text(), g, ok, w)
						}
					}
				}
			}
			checkLookups(t, ctx, r, ref, tc.lookups)
		})
	}
}

// TestPipeline8x8Ply9 checks the published 43 black wins at ply 8.
func TestPipeline8x8Ply9(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "nine", Config: runstore.Config{Board: 8, Target: 9, Sizes: runstore.Sizes{BlobPositions: 30000}}}
	rep, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 30 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reference.Enumerate(board.MustNew(8), 9)
	if err != nil {
		t.Fatal(err)
	}
	p8 := rep.Plies[8]
	if p8.BlackWins != 43 || p8.WhiteWins != 0 {
		t.Errorf("ply 8: %d black wins, %d white wins; want 43 and 0", p8.BlackWins, p8.WhiteWins)
	}
	for i := range ref.Report.Plies {
		w, g := ref.Report.Plies[i], rep.Plies[i]
		if [7]int64{w.Positions, w.Terminal, w.Edges, w.BlackWins, w.WhiteWins, w.Draws, w.Unknown} != [7]int64{g.Positions, g.Terminal, g.Edges, g.BlackWins, g.WhiteWins, g.Draws, g.Unknown} {
			t.Errorf("ply %d: pipeline %+v, reference %+v", i, g, w)
		}
	}
	t.Logf("transactions %d for %d edges: %.4f per edge", be.Stats().Total(), rep.Edges(), float64(be.Stats().Total())/float64(rep.Edges()))
}

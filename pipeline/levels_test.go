package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestSizeRules runs small plies with every size rule in force: final
// blobs and buckets that double from ply 3 (4x4) or 7 (8x8) on, and a
// merge fan-in so low that most plies get a combine level. The counts
// and results must match the reference tables, every ply past the fan-in
// must have been combined or merged in wide buckets, and final blobs
// must have grown.
func TestSizeRules(t *testing.T) {
	wide := 0 // plies merged in wide buckets
	for _, tc := range []struct {
		name string
		cfg  RunConfig
		want func(t *testing.T, ply int, got [6]int64)
	}{
		{"4x4", RunConfig{Name: "levelsfour", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 1, GrowFrom: 3, MergeFanIn: 2}}},
			func(t *testing.T, ply int, got [6]int64) {
				if got != testkit.Ref4x4[ply] {
					t.Errorf("ply %d: got %v, want %v", ply, got, testkit.Ref4x4[ply])
				}
			}},
		{"8x8", RunConfig{Name: "levelseight", Config: runstore.Config{Board: 8, Target: 8, Sizes: runstore.Sizes{BlobPositions: 300, BucketBlobs: 2, GrowFrom: 7, MergeFanIn: 3}}},
			func(t *testing.T, ply int, got [6]int64) {
				if got[0] != testkit.Ref8x8Positions[ply] || got[2] != testkit.Ref8x8Edges[ply] {
					t.Errorf("ply %d: %d positions and %d edges, want %d and %d", ply, got[0], got[2], testkit.Ref8x8Positions[ply], testkit.Ref8x8Edges[ply])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			be := openEmbedded(t)
			rep, err := RunLocal(ctx, be, tc.cfg, 3, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Complete {
				t.Fatal("the run did not complete")
			}
			sizes := tc.cfg.Sizes
			combined := 0
			for i, p := range rep.Plies {
				tc.want(t, i, [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws})
				if limit := int64(sizes.BlobPositionsAt(i)); p.Blobs > 0 && p.Positions > p.Blobs*limit {
					t.Errorf("ply %d: %d positions in %d final blobs of at most %d", i, p.Positions, p.Blobs, limit)
				}
				if i == 0 {
					continue
				}
				tasks := int(rep.Plies[i-1].Blobs)
				if most := sizes.MostBuckets(tasks); p.Merges > int64(most) {
					t.Errorf("ply %d: %d buckets with %d expansion tasks, at most %d", i, p.Merges, tasks, most)
				} else if most == runstore.MinRanges {
					wide++
				}
				if len(sizes.Levels(tasks, max(1, int(p.Merges)))) > 0 {
					combined++
					if p.Combines == 0 {
						t.Errorf("ply %d: %d expansion tasks over a fan-in of %d, but no combines", i, tasks, sizes.MergeFanIn)
					}
				} else if p.Combines != 0 {
					t.Errorf("ply %d: %d combines with %d expansion tasks, within the fan-in", i, p.Combines, tasks)
				}
			}
			if combined < 2 {
				t.Errorf("only %d plies were combined: the test does not exercise the combine level", combined)
			}
			last := rep.Plies[len(rep.Plies)-1]
			if grown := sizes.BlobPositionsAt(len(rep.Plies) - 1); grown <= tc.cfg.BlobPositions || last.Positions <= int64(tc.cfg.BlobPositions)*last.Blobs {
				t.Errorf("the last ply holds %d positions in %d blobs: final blobs did not grow past %d (to %d)", last.Positions, last.Blobs, tc.cfg.BlobPositions, grown)
			}
		})
	}
	if wide == 0 {
		t.Error("no ply was merged in wide buckets: the test does not exercise them")
	}
}

package pipeline

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestTargetPlyKeepsTerminalSourcesOnly checks which positions keep
// backtracking rows: every position below the target ply; at the target
// ply, only the terminal ones, unless the run solves it, when all do.
func TestTargetPlyKeepsTerminalSourcesOnly(t *testing.T) {
	for _, solve := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		be := openEmbedded(t)
		name := map[bool]string{false: "count", true: "solve"}[solve]
		cfg := RunConfig{Name: name, Config: runstore.Config{Board: 4, Target: 9, Solve: solve, Sizes: runstore.Sizes{BlobPositions: 100}}}
		if _, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{PollMax: 50 * time.Millisecond}, testLogger(t), nil); err != nil {
			t.Fatal(err)
		}
		r, err := OpenRun(ctx, be, name)
		if err != nil {
			t.Fatal(err)
		}
		for ply := 1; ply <= 9; ply++ {
			p, err := r.store.Ply(ctx, ply)
			if err != nil {
				t.Fatal(err)
			}
			terminalOnly := ply == 9 && !solve
			if p.TerminalSources != terminalOnly {
				t.Errorf("%s ply %d: TerminalSources %v, want %v", name, ply, p.TerminalSources, terminalOnly)
			}
			finals, err := r.store.Finals(ctx, ply)
			if err != nil {
				t.Fatal(err)
			}
			var rows, want int64
			for _, f := range finals {
				payload, err := r.store.Sources(ctx, f.Blob)
				if err != nil {
					t.Fatal(err)
				}
				sr := packed.NewSourceReader(bytes.NewReader(payload))
				var refs []packed.Ref
				for ok := true; ok; {
					if refs, ok = sr.Next(refs); ok {
						rows++
					}
				}
				if sr.Err() != nil {
					t.Fatalf("%s ply %d %s: %v", name, ply, f.Blob, sr.Err())
				}
				want += f.Count
				if terminalOnly {
					want += f.Terminal - f.Count
				}
			}
			if rows != want {
				t.Errorf("%s ply %d: %d positions with backtracking rows, want %d", name, ply, rows, want)
			}
		}
	}
}

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// TestTargetPlyKeepsTerminalSourcesOnly checks which positions keep
// backtracking rows: every position below the target ply; at the target
// ply, only the terminal ones, unless the run solves it, when all do.
// At every ply the merges also list the terminal positions beside the
// rows (packed.TerminalList), and the resolution of the target ply reads
// those instead of the blobs' keys: none of its resolutions reads a
// blob, where those of the ply before read each of theirs (and take the
// terminal positions from the list, not testing each position). Without
// the lists, as a merge of an earlier release leaves them, the
// resolutions read the keys, test them, and come to the same results.
func TestTargetPlyKeepsTerminalSourcesOnly(t *testing.T) {
	for _, tc := range []struct {
		name             string
		solve, dropLists bool
	}{{"count", false, false}, {"solve", true, false}, {"unlisted", false, true}} {
		name, solve := tc.name, tc.solve
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var mu sync.Mutex
		reads := map[int]int{} // blob reads of resolutions, by ply
		be := embeddedWith(t, func(c *storage.Call, next func() error) error {
			if ply, ok := storage.PlyFrom(c.Ctx); ok && (c.Op == storage.BlobGet || c.Op == storage.BlobOpen) && storage.CategoryFrom(c.Ctx) == task.CategoryBacktrack {
				mu.Lock()
				reads[ply]++
				mu.Unlock()
			}
			return next()
		})
		if tc.dropLists {
			be = withoutTerminalLists{be}
		}
		cfg := RunConfig{Name: name, Config: runstore.Config{Board: 4, Target: 9, Solve: solve, Sizes: runstore.Sizes{BlobPositions: 100}}}
		rep, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{PollMax: 50 * time.Millisecond}, testLogger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !solve {
			checkReport4x4(t, rep, 9) // the counts, and the results of the plies before
		}
		if (solve || tc.dropLists) != (reads[9] != 0) || reads[8] == 0 {
			t.Errorf("%s: the resolutions read %d blobs at the target ply and %d at the ply before", name, reads[9], reads[8])
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
			listed := !tc.dropLists // every ply's merges list its terminal positions
			if p.TerminalSources != terminalOnly {
				t.Errorf("%s ply %d: TerminalSources %v, want %v", name, ply, p.TerminalSources, terminalOnly)
			}
			finals, err := r.store.Finals(ctx, ply)
			if err != nil {
				t.Fatal(err)
			}
			var rows, want int64
			for _, f := range finals {
				payload, list, err := r.store.SourcesAndTerminals(ctx, f.Blob)
				if err != nil {
					t.Fatal(err)
				}
				if listed != (list != nil) {
					t.Fatalf("%s ply %d %s: a terminal list of %d bytes", name, ply, f.Blob, len(list))
				}
				if listed {
					checkTerminalList(t, r, f, list)
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
		// The audit reads the target ply's rows with their lists, without
		// them (as a release before the lists left them), or whole (a run
		// that solves): it finds them, and finds them missing once deleted.
		expectClean(t, ctx, r, name)
		finals, err := r.store.Finals(ctx, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.store.DeleteSources(ctx, finals[0].Blob); err != nil {
			t.Fatal(err)
		}
		lines, _ := auditLines(t, ctx, r)
		if want := fmt.Sprintf("error: ply 9: final blob 0 (%s) has no backtracking rows", finals[0].Blob); !slices.Contains(lines, want) {
			t.Errorf("%s: with the rows of final blob 0 deleted, the audit found %q; want %q among them", name, lines, want)
		}
	}
}

// checkTerminalList checks a final blob's terminal list against its keys:
// its count, and exactly the terminal positions, at their indexes.
func checkTerminalList(t *testing.T, r *Run, f runstore.FinalBlob, data []byte) {
	t.Helper()
	l, err := packed.DecodeTerminalList(r.Board, data)
	if err != nil {
		t.Fatalf("%s: %v", f.Blob, err)
	}
	keys, err := r.shared.ReadKeysTo(context.Background(), f.Blob, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want packed.TerminalList
	for i, k := range keys {
		if r.Board.Terminal(k) {
			want.Add(int64(i), k)
		}
	}
	if l.Count != int64(len(keys)) || l.Count != f.Count || len(l.Indexes) != int(f.Terminal) ||
		!slices.Equal(l.Indexes, want.Indexes) || !slices.Equal(l.Positions, want.Positions) {
		t.Fatalf("%s: a terminal list of %d positions, %d terminal; its keys %d, %d terminal, the row %d and %d", f.Blob, l.Count, len(l.Indexes), len(keys), len(want.Indexes), f.Count, f.Terminal)
	}
}

// withoutTerminalLists is a backend whose tables drop the rows of
// terminal lists (runstore's sources partitions, rows "t-..."), as if a
// release before the lists had merged the blobs.
type withoutTerminalLists struct{ storage.Backend }

func (b withoutTerminalLists) Table(name string) storage.Table {
	return tableWithoutTerminalLists{b.Backend.Table(name)}
}

type tableWithoutTerminalLists struct{ storage.Table }

func (t tableWithoutTerminalLists) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	kept := slices.DeleteFunc(slices.Clone(ops), func(op storage.Op) bool {
		return strings.HasPrefix(pk, "sp") && strings.HasPrefix(op.Entity.RowKey, "t-")
	})
	if len(kept) == 0 {
		return nil, nil
	}
	return t.Table.Transact(ctx, pk, kept)
}

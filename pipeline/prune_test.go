package pipeline

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// TestPrunedSolveModes: the solve modes root and wld give the start's
// exact score (root) or result (wld) that solving the start gives, every
// score or bound a position reports holds its solver score, and a
// frontier is not solved exactly throughout. The target ply's small blobs
// make the positions' parents learn from several tasks.
func TestPrunedSolveModes(t *testing.T) {
	six := board.MustNew(6)
	sixStart20, err := six.ParseMoves("e4c5b4a5a4e3a6b5d5b6b3e5")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		board  int
		start  board.Position
		target int
	}{
		{4, board.Position{}, 4}, // the whole 4x4 game: -10 (docs/reference.md)
		{6, sixStart20, 3},
	} {
		b := board.MustNew(tc.board)
		start := tc.start
		if start == (board.Position{}) {
			start = b.Start()
		}
		want := solverScore(t, newTestSolver(t), b, start)
		for _, mode := range []runstore.SolveMode{runstore.SolveRoot, runstore.SolveWLD} {
			name := fmt.Sprintf("prune%d%s", tc.board, mode)
			t.Run(name, func(t *testing.T) {
				rep, r := solveRun(t, RunConfig{Name: name, Config: runstore.Config{Board: tc.board, Target: tc.target, Sizes: runstore.Sizes{BlobPositions: 40, BucketBlobs: 4}, Start: start, Solve: true, SolvePositions: 3, SolveMode: mode}})
				wantRoot := map[bool]string{true: "black", false: "white"}[want > 0]
				if want == 0 {
					wantRoot = "draw"
				}
				if rep.Root != wantRoot {
					t.Errorf("root %s, want %s (solver %+d)", rep.Root, wantRoot, want)
				}
				if mode == runstore.SolveRoot && (rep.RootScore == nil || *rep.RootScore != want) {
					t.Errorf("root score %v, want %+d", rep.RootScore, want)
				}
				checkBounds(t, r, tc.target)
				checkFrontier(t, r, rep.Frontier, rep.Plies[tc.target].Positions)
			})
		}
	}
}

// checkBounds requires every score of plies 0 to last, exact or a bound,
// to hold the solver's score, and some position of the last ply not to
// be solved exactly.
func checkBounds(t *testing.T, r *Run, last int) {
	t.Helper()
	s := newTestSolver(t)
	squares := r.Board.Size() * r.Board.Size()
	for ply := 0; ply <= last; ply++ {
		scores, err := r.Scores(context.Background(), ply)
		if err != nil {
			t.Fatal(err)
		}
		inexact, bounded := 0, 0
		for p, sc := range scores {
			want := solverScore(t, s, r.Board, p)
			if lo, hi := sc.Interval(squares); lo > want || hi < want {
				t.Errorf("ply %d %s: score %+v, solver %+d", ply, p.Text(), sc, want)
			}
			if !sc.Exact {
				inexact++
			}
			if sc.Bounded {
				bounded++
			}
		}
		t.Logf("ply %d: %d positions, %d exact, %d bounded, %d unknown", ply, len(scores), len(scores)-inexact, bounded, inexact-bounded)
		if ply == last && inexact == 0 {
			t.Errorf("ply %d: all %d positions solved exactly, none bounded or skipped", ply, len(scores))
		}
	}
}

func newTestSolver(t *testing.T) *solve.Solver {
	s, err := solve.New(solve.Options{TableBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkFrontier requires the report's counts of what the solving did at
// the target ply to cover its positions, and a lookup of each position
// to say the same as the report counted.
func checkFrontier(t *testing.T, r *Run, f *report.Frontier, positions int64) {
	t.Helper()
	if f == nil {
		t.Fatal("no frontier counts in the report")
	}
	if f.Solved+f.Bounded+f.Skipped+f.Over != positions {
		t.Errorf("frontier %+v, want %d positions in all", *f, positions)
	}
	scores, err := r.Scores(context.Background(), r.Config.Target)
	if err != nil {
		t.Fatal(err)
	}
	var got report.Frontier
	for p := range scores {
		info, err := r.Lookup(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		switch info.Frontier {
		case "solved":
			got.Solved++
		case "bounded":
			got.Bounded++
		case "skipped":
			got.Skipped++
		default:
			got.Over++
		}
	}
	if got != *f {
		t.Errorf("lookups: %+v, report: %+v", got, *f)
	}
}

// TestFaultPrunedSolve strikes a sample of the storage calls of 4x4 runs
// solved from ply 6 in the modes root and wld, in every fault mode: the
// frontier tasks read each other's notices while they solve, and a
// crash must still leave the start's exact score (root) or result (wld),
// only true bounds everywhere, and nothing behind. FAULT_SEED and
// FAULT_SAMPLE work as for TestFaultSample.
func TestFaultPrunedSolve(t *testing.T) {
	t.Parallel() // as TestFaultAtEveryCall says
	if testing.Short() {
		t.Skip("a sample of faulty runs")
	}
	seed := uint64(29)
	if s := os.Getenv("FAULT_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FAULT_SEED=%q: %v", s, err)
		}
	}
	b := board.MustNew(4)
	truth := map[board.Position]int{}
	s := newTestSolver(t)
	score := func(p board.Position) int {
		if v, ok := truth[p]; ok {
			return v
		}
		truth[p] = solverScore(t, s, b, p)
		return truth[p]
	}
	for _, mode := range []runstore.SolveMode{runstore.SolveRoot, runstore.SolveWLD} {
		cfg := RunConfig{Name: "faultprune" + string(mode), Config: runstore.Config{Board: 4, Target: 6, Sizes: runstore.Sizes{BlobPositions: 20, BucketBlobs: 2}, Solve: true, SolvePositions: 4, SolveMode: mode}}
		check := func(ctx context.Context, be storage.Backend) error {
			r, err := OpenRun(ctx, be, cfg.Name)
			if err != nil {
				return err
			}
			rep, err := r.Report(ctx)
			if err != nil {
				return err
			}
			switch {
			case !rep.Complete || rep.Root != "white":
				return fmt.Errorf("complete %v, root %s; want white", rep.Complete, rep.Root)
			case mode == runstore.SolveRoot && (rep.RootScore == nil || *rep.RootScore != -10):
				return fmt.Errorf("root score %v, want -10", rep.RootScore)
			}
			for ply := 0; ply <= cfg.Target; ply++ {
				scores, err := r.Scores(ctx, ply)
				if err != nil {
					return err
				}
				for p, sc := range scores {
					if lo, hi := sc.Interval(16); lo > score(p) || hi < score(p) {
						return fmt.Errorf("ply %d %s: score %+v, solver %+d", ply, p.Text(), sc, score(p))
					}
				}
			}
			return checkClean(ctx, r, cfg)
		}
		t.Run(string(mode), func(t *testing.T) {
			clean := runWithFault(t, cfg, check, faulty.Config{})
			if clean.err != nil {
				t.Fatalf("run without faults: %v", clean.err)
			}
			for _, fm := range allModes {
				for _, k := range randomCalls(t, seed, clean.calls) {
					if o := runWithFault(t, cfg, check, faulty.Config{Mode: fm, At: k}); o.err != nil {
						t.Fatalf("%s at call %s: %v", fm, o.fired, o.err)
					}
				}
			}
		})
	}
}

package solve

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// TestCores solves with two threads a solve whose helper must borrow an
// idle CPU from Cores: while Cores has none the helper never searches,
// and once one is free a helper that takes it gives it back when the
// solve ends. The answers are those of one thread.
func TestCores(t *testing.T) {
	b := board.MustNew(8)
	serial := newSolver(t, 1<<20)
	cores := NewCores(1)
	s, err := New(Options{TableBytes: 1 << 20, Threads: 2, Cores: cores})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	for i := range 4 {
		if i == 2 {
			cores.Free()
		}
		p := randomPosition(b, rng, splitMin+4)
		want, err := serial.Solve(b, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Solve(b, p)
		if err != nil {
			t.Fatal(err)
		}
		if got.Score != want.Score || !slices.Equal(got.BestMoves, want.BestMoves) {
			t.Errorf("%s: %+d %v, one thread %+d %v", p.Text(), got.Score, got.BestMoves, want.Score, want.BestMoves)
		}
		if h := s.helpers[0].nodes; i < 2 && h != 0 {
			t.Errorf("solve %d: the helper searched %d nodes with no idle CPU", i, h)
		}
		if free := len(cores.free); i >= 2 && free != 1 {
			t.Errorf("solve %d: %d idle CPUs after the solve, want the 1 freed", i, free)
		}
	}
	cores.Free() // beyond NewCores' max: no effect, and no wait
	if free := len(cores.free); free != 1 {
		t.Errorf("%d idle CPUs after freeing one too many, want 1", free)
	}
}

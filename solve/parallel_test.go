package solve

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// TestParallel solves positions big enough for the threads to share out
// moves (splitMin empties and more) with one thread and with several, one
// table each, and requires the same scores and best moves.
func TestParallel(t *testing.T) {
	b := board.MustNew(8)
	serial := newSolver(t, 1<<20)
	for _, threads := range []int{2, 3} {
		par, err := New(Options{TableBytes: 1 << 20, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(int64(threads)))
		for range 6 {
			p := randomPosition(b, rng, splitMin+2)
			want, err := serial.Solve(b, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := par.Solve(b, p)
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != want.Score || !slices.Equal(got.BestMoves, want.BestMoves) {
				t.Errorf("%d threads, %s: %+d %v, one thread %+d %v", threads, p.Text(), got.Score, got.BestMoves, want.Score, want.BestMoves)
			}
		}
	}
}

// TestOneBestMove requires, with Options.OneBestMove, the same score and
// one of the best moves that a full solve lists, on one thread and two.
func TestOneBestMove(t *testing.T) {
	b := board.MustNew(8)
	all := newSolver(t, 1<<20)
	for _, threads := range []int{1, 2} {
		one, err := New(Options{TableBytes: 1 << 20, OneBestMove: true, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(int64(10 + threads)))
		for range 20 {
			p := randomPosition(b, rng, 12)
			want, err := all.Solve(b, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := one.Solve(b, p)
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != want.Score || len(got.BestMoves) != min(1, len(want.BestMoves)) ||
				len(got.BestMoves) == 1 && !slices.Contains(want.BestMoves, got.BestMoves[0]) {
				t.Errorf("%d threads, %s: %+d %v, all best moves %+d %v", threads, p.Text(), got.Score, got.BestMoves, want.Score, want.BestMoves)
			}
		}
	}
}

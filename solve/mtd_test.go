package solve

import (
	"context"
	"math/rand"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// TestMTD requires mtd to find the score of the full-window search from
// any starting guess, each with an empty table, so that no test reuses
// what an earlier one learnt.
func TestMTD(t *testing.T) {
	b := board.MustNew(8)
	rng := rand.New(rand.NewSource(7))
	for range 5 {
		p := randomPosition(b, rng, 10)
		own, opp := p.Mover(), p.Opponent()
		empties := 64 - p.Discs()
		want := searcher(t).search(own, opp, -65, 65, empties)
		for _, tc := range []struct{ lo, up, guess int }{
			{-64, 64, -64}, {-64, 64, 64}, {-64, 64, 0}, {-64, 64, want},
			{-64, 64, want - 2}, {-64, 64, want + 10},
			{want, 64, 64}, {-64, want, -64}, {want, want, want},
		} {
			if got := searcher(t).mtd(own, opp, empties, tc.lo, tc.up, tc.guess); got != want {
				t.Errorf("%s: mtd in [%d, %d] from %d = %d, want %d", p.Text(), tc.lo, tc.up, tc.guess, got, want)
			}
		}
	}
}

// searcher returns a Solver ready to search 8x8 positions outside a solve.
func searcher(t *testing.T) *Solver {
	s := newSolver(t, 1<<16)
	s.g, s.ctx = geometries[8], context.Background()
	return s
}

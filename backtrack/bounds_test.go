package backtrack

import (
	"math/rand"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// TestTallyBounds requires a parent's bounds from its children's bounds
// to hold its true minimax score: random children with random true
// scores report exact scores, bounds or nothing, and the tally's
// interval must contain the parent's score, and be exact when every
// child is exact.
func TestTallyBounds(t *testing.T) {
	const squares = 64
	rng := rand.New(rand.NewSource(29))
	for range 2000 {
		side := board.Color(rng.Intn(2))
		n := 1 + rng.Intn(5)
		var tally Tally
		best := 0
		allExact := true
		for i := range n {
			v := 2*rng.Intn(squares+1) - squares
			if i == 0 || side == board.Black && v > best || side == board.White && v < best {
				best = v
			}
			var sc Score
			switch rng.Intn(5) {
			case 0:
				sc = DiffScore(v)
			case 1:
				sc = IntervalScore(v-2*rng.Intn(4), squares, squares)
			case 2:
				sc = IntervalScore(-squares, v+2*rng.Intn(4), squares)
			case 3:
				sc = IntervalScore(v-2*rng.Intn(3), v+2*rng.Intn(3), squares)
			}
			if !sc.Exact {
				allExact = false
			}
			if sc == (Score{}) && rng.Intn(2) == 0 {
				continue // no notice at all
			}
			tally.Add(side, Notice{Result: sc.Result(), Score: sc})
		}
		lo, hi := tally.Bounds(side, n, squares)
		if lo > best || hi < best {
			t.Fatalf("side %v, %d children: [%d, %d] misses the score %d", side, n, lo, hi, best)
		}
		if allExact && lo != hi {
			t.Fatalf("side %v, every child exact: [%d, %d], want %d", side, lo, hi, best)
		}
		if own := tally.Lower(squares); side == board.Black && own != max(lo, -squares) && tally.Bounded > 0 ||
			side == board.White && tally.Bounded > 0 && own != -hi {
			t.Fatalf("side %v: Lower %d against [%d, %d]", side, own, lo, hi)
		}
	}
}

func TestIntervalScore(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int
		want   Score
		result board.Result
	}{
		{4, 4, DiffScore(4), board.BlackWins},
		{2, 64, BoundsScore(2, 64), board.BlackWins},
		{-64, -6, BoundsScore(-64, -6), board.WhiteWins},
		{0, 10, BoundsScore(0, 10), board.Unknown},
		{-10, 0, BoundsScore(-10, 0), board.Unknown},
		{-66, 8, BoundsScore(-64, 8), board.Unknown},
		{-64, 64, Score{}, board.Unknown},
	} {
		got := IntervalScore(tc.lo, tc.hi, 64)
		if got != tc.want || got.Result() != tc.result {
			t.Errorf("[%d, %d]: %+v (%v), want %+v (%v)", tc.lo, tc.hi, got, got.Result(), tc.want, tc.result)
		}
	}
}

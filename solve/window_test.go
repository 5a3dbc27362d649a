package solve

import (
	"context"
	"errors"
	"math/rand"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// TestSolveWindow requires every windowed solve to be consistent with
// the exact score found by brute force: exact inside the window, a true
// bound on the right side of it outside.
func TestSolveWindow(t *testing.T) {
	for _, tc := range []struct {
		size, empties int
	}{
		{4, 12}, {6, 11}, {8, 11}, {8, 14},
	} {
		b := board.MustNew(tc.size)
		sq := tc.size * tc.size
		rng := rand.New(rand.NewSource(int64(tc.size*100 + tc.empties)))
		for range 6 {
			p := randomPosition(b, rng, tc.empties)
			var want int
			if tc.empties <= 11 {
				want, _ = brute(b, p)
			} else {
				res, err := Solve(b, p, Options{TableBytes: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				want = res.Score
			}
			windows := [][2]int{
				{-sq - 1, sq + 1}, {-1, 1}, {0, 1}, {-1, 0}, {want - 1, want + 1}, {want, want + 1},
				{want - 1, want}, {want - 6, want + 6}, {want + 2, sq + 1}, {-sq - 1, want - 2},
				{want - 4, sq + 1}, {-sq - 1, want + 4}, {want + 2, want + 10}, {want - 10, want - 2},
			}
			s := newSolver(t, 1<<18)
			for _, w := range windows {
				r, err := s.SolveWindow(context.Background(), b, p, w[0], w[1])
				switch {
				case err != nil:
					t.Fatalf("%s (%d, %d): %v", p.Text(), w[0], w[1], err)
				case r.Lower > want || r.Upper < want:
					t.Fatalf("%s (%d, %d): [%d, %d] misses the score %d", p.Text(), w[0], w[1], r.Lower, r.Upper, want)
				case want > w[0] && want < w[1] && !r.Exact():
					t.Fatalf("%s (%d, %d): [%d, %d], want exact %d", p.Text(), w[0], w[1], r.Lower, r.Upper, want)
				case want <= w[0] && r.Upper > w[0], want >= w[1] && r.Lower < w[1]:
					t.Fatalf("%s (%d, %d): [%d, %d] does not settle the side of %d", p.Text(), w[0], w[1], r.Lower, r.Upper, want)
				}
			}
		}
	}
}

func TestSolveWindowErrors(t *testing.T) {
	b := board.MustNew(8)
	s := newSolver(t, 1<<16)
	if _, err := s.SolveWindow(context.Background(), b, b.Start(), 2, 2); !errors.Is(err, ErrOptions) {
		t.Errorf("empty window: %v, want ErrOptions", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SolveWindow(ctx, b, b.Start(), -1, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestEstimate: an estimate is a score the board can have, and searched
// to the end of the game it is the exact score.
func TestEstimate(t *testing.T) {
	b := board.MustNew(8)
	rng := rand.New(rand.NewSource(45))
	s := newSolver(t, 1<<18)
	for range 6 {
		p := randomPosition(b, rng, 9)
		want, _ := brute(b, p)
		for _, depth := range []int{1, 3, 20} {
			got, err := s.Estimate(b, p, depth)
			switch {
			case err != nil:
				t.Fatal(err)
			case got%2 != 0 || got < -64 || got > 64:
				t.Errorf("%s depth %d: %d is no score", p.Text(), depth, got)
			case depth >= 9 && got != want:
				t.Errorf("%s depth %d: %d, exact %d", p.Text(), depth, got, want)
			}
		}
	}
}

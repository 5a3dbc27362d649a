package board

import (
	"math/bits"
	"math/rand"
	"slices"
	"testing"
)

// TestParentsInvertChildren checks Parents against Children over whole
// plies: a ply's positions whose Parents include q are exactly q's
// children, for every q of the ply before (to the end of the game on 4x4).
func TestParentsInvertChildren(t *testing.T) {
	for _, tc := range []struct{ size, plies int }{{4, 12}, {6, 6}, {8, 5}} {
		b := MustNew(tc.size)
		ply := []Position{b.Canonical(b.Start())}
		for n := 0; n < tc.plies && len(ply) > 0; n++ {
			inPly := map[Position]bool{}
			for _, q := range ply {
				inPly[q] = true
			}
			// want: the parents in this ply of each child, by forward moves.
			want := map[Position][]Position{}
			var kids []Position
			for _, q := range ply {
				kids, _ = b.Children(q, kids[:0])
				for _, c := range kids {
					want[c] = append(want[c], q)
				}
			}
			next := make([]Position, 0, len(want))
			for c, ps := range want {
				next = append(next, c)
				var got []Position
				for _, q := range b.Parents(c, nil) {
					kids, _ = b.Children(q, kids[:0])
					if !slices.Contains(kids, c) {
						t.Fatalf("%dx%d ply %d: %v has parent %v, which does not lead to it", tc.size, tc.size, n+1, c, q)
					}
					if inPly[q] {
						got = append(got, q)
					}
				}
				slices.SortFunc(got, Compare)
				slices.SortFunc(ps, Compare)
				if !slices.Equal(got, ps) {
					t.Fatalf("%dx%d ply %d: parents of %v in ply %d = %v, want %v", tc.size, tc.size, n+1, c, n, got, ps)
				}
			}
			ply = next
		}
	}
}

// TestParentsAlongGames checks that each position of random games, passes
// and crowded boards included, has the one before it among its parents.
func TestParentsAlongGames(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(11))
		for g := 0; g < 200; g++ {
			var prev *Position
			randomGame(b, rng, func(p Position) {
				if prev != nil {
					ps := b.Parents(b.Canonical(p), nil)
					if !slices.Contains(ps, b.Canonical(*prev)) {
						t.Fatalf("%dx%d: %v, reached from %v, lacks it among its parents %v", n, n, p, *prev, ps)
					}
					if !slices.Contains(b.Parents(p, nil), b.Canonical(*prev)) {
						t.Fatalf("%dx%d: %v (as played) lacks its parent %v", n, n, p, *prev)
					}
				}
				prev = &p
			})
		}
	}
}

// TestParentsOfPlyOne: a position one move from the start has the start
// among its parents, and positions that no game reaches beside it (the
// other four-disc squares that the move could have come from).
func TestParentsOfPlyOne(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		start := b.Start()
		c, err := b.Play(start, bits.TrailingZeros64(b.Moves(start)))
		if err != nil {
			t.Fatal(err)
		}
		ps := b.Parents(c, nil)
		if !slices.Contains(ps, b.Canonical(start)) {
			t.Errorf("%dx%d: parents of %v = %v, without the start", n, n, c, ps)
		}
		for _, q := range ps {
			if q.Discs() != 4 || q.Side != Black {
				t.Errorf("%dx%d: parent %v of %v is not four discs with black to move", n, n, q, c)
			}
		}
	}
}

package solve

import (
	"math/bits"
	"math/rand"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// randomDiscs splits about fill of b's squares at random between two sides.
func randomDiscs(b *board.Board, rng *rand.Rand, fill float64) (own, opp uint64) {
	for m := b.Mask(); m != 0; m &= m - 1 {
		x := m & -m
		switch r := rng.Float64(); {
		case r < fill/2:
			own |= x
		case r < fill:
			opp |= x
		}
	}
	return own, opp
}

// TestFlips compares flips, moves and movesScalar with package board's on random discs
// (not only reachable positions) of every size, every empty square.
func TestFlips(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int{4, 6, 8} {
		b := board.MustNew(size)
		g := geometries[size]
		for range 20000 {
			own, opp := randomDiscs(b, rng, rng.Float64())
			p := board.Position{Occ: own | opp, White: opp, Side: board.Black}
			empty := g.mask &^ (own | opp)
			var legal uint64
			for m := empty; m != 0; m &= m - 1 {
				sq := bits.TrailingZeros64(m)
				want := b.Flips(p, sq)
				if got := flips(sq, own, opp); got != want {
					t.Fatalf("%dx%d %s: flips(%s) = %#x, want %#x", size, size, p.Text(), b.SquareName(sq), got, want)
				}
				if want != 0 {
					legal |= 1 << uint(sq)
				}
			}
			// moves is the vector version in a GOEXPERIMENT=simd build for
			// x86-64-v3 (as make builds on such a CPU), else movesScalar.
			if got := moves(own, opp, empty); got != legal || got != b.Moves(p) {
				t.Fatalf("%dx%d %s: moves = %#x, want %#x", size, size, p.Text(), got, legal)
			}
			if got := movesScalar(own, opp, empty); got != legal {
				t.Fatalf("%dx%d %s: movesScalar = %#x, want %#x", size, size, p.Text(), got, legal)
			}
		}
	}
}

// TestLastFlips compares lastFlips with package board's flips on boards of
// every size with one empty square, for both sides.
func TestLastFlips(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, size := range []int{4, 6, 8} {
		b := board.MustNew(size)
		for range 20000 {
			own, _ := randomDiscs(b, rng, 2*rng.Float64())
			empty := b.Mask() &^ own
			for k := rng.Intn(bits.OnesCount64(empty) + 1); k > 0; k-- {
				empty &= empty - 1
			}
			if empty == 0 {
				continue
			}
			sq := bits.TrailingZeros64(empty)
			x := uint64(1) << uint(sq)
			own &^= x
			opp := b.Mask() &^ own &^ x
			for _, side := range []board.Color{board.Black, board.White} {
				p := board.Position{Occ: own | opp, White: opp, Side: side}
				want := bits.OnesCount64(b.Flips(p, sq))
				if got := lastFlips(sq, p.Mover()); got != want {
					t.Fatalf("%dx%d %s: lastFlips(%s) = %d, want %d", size, size, p.Text(), b.SquareName(sq), got, want)
				}
			}
		}
	}
}

// BenchmarkFlips times flips on every empty square of random positions
// 20 empties from the end (legal moves and not).
func BenchmarkFlips(b *testing.B) {
	bd := board.MustNew(8)
	rng := rand.New(rand.NewSource(1))
	type try struct {
		sq       int
		own, opp uint64
	}
	var tries []try
	for range 1000 {
		p := randomPosition(bd, rng, 20)
		for m := bd.Mask() &^ p.Occ; m != 0; m &= m - 1 {
			tries = append(tries, try{bits.TrailingZeros64(m), p.Mover(), p.Opponent()})
		}
	}
	var sink uint64
	for b.Loop() {
		for _, t := range tries {
			sink += flips(t.sq, t.own, t.opp)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tries)), "ns/flips")
}

// BenchmarkMoves times moves on random positions 20 empties from the end.
func BenchmarkMoves(b *testing.B) {
	bd := board.MustNew(8)
	rng := rand.New(rand.NewSource(1))
	var ps [][3]uint64
	for range 1000 {
		p := randomPosition(bd, rng, 20)
		ps = append(ps, [3]uint64{p.Mover(), p.Opponent(), bd.Mask() &^ p.Occ})
	}
	var sink uint64
	for b.Loop() {
		for _, p := range ps {
			sink += moves(p[0], p[1], p[2])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ps)), "ns/moves")
}

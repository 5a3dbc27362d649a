package lines

import (
	"math/rand/v2"
	"testing"
)

// walk is Flips by the rules, square by square along each of the eight
// directions from sq, on a board of the given size in the frame's
// top-left corner.
func walk(size, sq int, own, opp uint64) uint64 {
	var f uint64
	r0, c0 := sq/8, sq%8
	for _, d := range [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}} {
		var run uint64
		r, c := r0+d[0], c0+d[1]
		for ; r >= 0 && r < size && c >= 0 && c < size && opp>>(r*8+c)&1 == 1; r, c = r+d[0], c+d[1] {
			run |= 1 << (r*8 + c)
		}
		if r >= 0 && r < size && c >= 0 && c < size && own>>(r*8+c)&1 == 1 {
			f |= run
		}
	}
	return f
}

// TestFlips compares Flips with walk on random discs (not only reachable
// positions: any density, any colouring) of boards of 4, 6 and 8 squares a
// side, at every empty square.
func TestFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range []int{4, 6, 8} {
		var mask uint64
		for r := range size {
			mask |= (1<<size - 1) << (8 * r)
		}
		for range 20000 {
			density := rng.Float64()
			var own, opp uint64
			for m := mask; m != 0; m &= m - 1 {
				sq := m & -m
				if rng.Float64() < density {
					if rng.IntN(2) == 0 {
						own |= sq
					} else {
						opp |= sq
					}
				}
			}
			for empty := mask &^ (own | opp); empty != 0; empty &= empty - 1 {
				sq := 0
				for empty>>sq&1 == 0 {
					sq++
				}
				if got, want := Flips(sq, own, opp), walk(size, sq, own, opp); got != want {
					t.Fatalf("%dx%d: own %#x, opp %#x, square %d: Flips = %#x, want %#x", size, size, own, opp, sq, got, want)
				}
			}
		}
	}
}

// TestBytes: ColByte and DiagByte put each square of their line at its
// place, and Diagonals holds the squares that share a diagonal with sq.
func TestBytes(t *testing.T) {
	for sq := range 64 {
		c, r := sq%8, sq/8
		if got := ColByte(1<<sq, uint(c)); got != 1<<r {
			t.Fatalf("ColByte of square %d = %#x, want %#x", sq, got, 1<<r)
		}
		d, a := Diagonals(sq)
		for other := range 64 {
			oc, or := other%8, other/8
			if on := d>>other&1 == 1; on != (oc-or == c-r) {
				t.Fatalf("diagonal of %d holds %d: %v", sq, other, on)
			}
			if on := a>>other&1 == 1; on != (oc+or == c+r) {
				t.Fatalf("anti-diagonal of %d holds %d: %v", sq, other, on)
			}
		}
		for _, diag := range []uint64{d, a} {
			if got := DiagByte(1<<sq, diag); got != 1<<c {
				t.Fatalf("DiagByte of square %d = %#x, want %#x", sq, got, 1<<c)
			}
		}
	}
}

// BenchmarkFlips times Flips on the legal moves of random half-full
// boards.
func BenchmarkFlips(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	type try struct {
		sq       int
		own, opp uint64
	}
	var tries []try
	for len(tries) < 10000 {
		own, opp := rng.Uint64()&rng.Uint64(), uint64(0)
		opp = rng.Uint64() &^ own & rng.Uint64()
		for sq := range 64 {
			if (own|opp)>>sq&1 == 0 && walk(8, sq, own, opp) != 0 {
				tries = append(tries, try{sq, own, opp})
			}
		}
	}
	var sink uint64
	for b.Loop() {
		for _, t := range tries {
			sink += Flips(t.sq, t.own, t.opp)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tries)), "ns/flips")
}

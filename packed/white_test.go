package packed

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// whiteWays runs f with the tables of white.go and, where the processor
// has BMI2 (fast or not), with PDEP and PEXT, so that both ways of
// coding the white discs are checked on such a machine.
func whiteWays(t *testing.T, f func(t *testing.T)) {
	ways := []bool{false}
	if hasBMI2 {
		ways = append(ways, true)
	}
	for _, bmi := range ways {
		name := "tables"
		if bmi {
			name = "bmi2"
		}
		t.Run(name, func(t *testing.T) {
			defer func(old bool) { useBMI2 = old }(useBMI2)
			useBMI2 = bmi
			f(t)
		})
	}
}

// TestBMI2 checks the instructions against the bit loop and the naive
// deposit, on random masks of every popcount, in positions and edges.
func TestBMI2(t *testing.T) {
	if !hasBMI2 {
		t.Skip("no BMI2 on this processor")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ps := make([]board.Position, 5000)
	es := make([]Edge, len(ps))
	for i := range ps {
		occ := keepBits(rng.Uint64(), rng.IntN(65), rng)
		white := rng.Uint64() & occ
		if got, want := pextBMI2(white, occ), pextBits(white, occ); got != want {
			t.Fatalf("pextBMI2(%#x, %#x) = %#x, want %#x", white, occ, got, want)
		}
		bits := rng.Uint64()
		ps[i] = board.Position{Side: board.Color(i % 2), Occ: occ, White: bits}
		es[i] = Edge{Pos: ps[i], Ref: Ref{Blob: uint32(i), Index: ^uint32(i)}}
	}
	want := make([]board.Position, len(ps))
	for i, p := range ps {
		want[i] = board.Position{Side: p.Side, Occ: p.Occ, White: depositNaive(p.White, p.Occ)}
	}
	depositPositions(ps)
	depositEdges(es)
	for i := range ps {
		if ps[i] != want[i] {
			t.Fatalf("position %d: got %+v, want %+v", i, ps[i], want[i])
		}
		if e := (Edge{Pos: want[i], Ref: Ref{Blob: uint32(i), Index: ^uint32(i)}}); es[i] != e {
			t.Fatalf("edge %d: got %+v, want %+v", i, es[i], e)
		}
	}
	depositPositions(nil)
	depositEdges(nil)
}

// pdep inverts pext by a depositor: it scatters the low bits of x to the
// set bits of mask, so the result is always a subset of mask.
func pdep(x, mask uint64) uint64 { return newDepositor(mask).deposit(x) }

// keepBits returns a random mask of k bits, preferring those of x.
func keepBits(x uint64, k int, rng *rand.Rand) uint64 {
	for bits.OnesCount64(x) > k {
		x &^= 1 << rng.IntN(64)
	}
	for bits.OnesCount64(x) < k {
		x |= 1 << rng.IntN(64)
	}
	return x
}

// TestWhiteBits: WhiteDiscs inverts WhiteBits, both ways, on positions
// of every disc count, and white bits of one occupancy sort as the
// white discs do.
func TestWhiteBits(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for discs := range 65 {
			occ := keepBits(rng.Uint64(), discs, rng)
			a, b := rng.Uint64()&occ, rng.Uint64()&occ
			p := board.Position{Occ: occ, White: a}
			w := WhiteBits(p)
			if want := pextBits(a, occ); w != want {
				t.Fatalf("%d discs: WhiteBits(%#x over %#x) = %#x, want %#x", discs, a, occ, w, want)
			}
			if got := WhiteDiscs(occ, w); got != a {
				t.Fatalf("%d discs: WhiteDiscs(%#x, %#x) = %#x, want %#x", discs, occ, w, got, a)
			}
			if wb := WhiteBits(board.Position{Occ: occ, White: b}); (a < b) != (w < wb) {
				t.Fatalf("%d discs: white %#x < %#x but white bits %#x < %#x is %v", discs, a, b, w, wb, w < wb)
			}
		}
	})
}

// TestExtractWhites: ExtractWhites turns each position's white discs
// into WhiteBits, both ways, on positions of every disc count, and
// leaves the rest of them as they were.
func TestExtractWhites(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		ps := make([]board.Position, 650)
		for i := range ps {
			occ := keepBits(rng.Uint64(), i%65, rng)
			ps[i] = board.Position{Side: board.Color(i % 2), Occ: occ, White: rng.Uint64() & occ}
		}
		want := make([]board.Position, len(ps))
		for i, p := range ps {
			want[i] = board.Position{Side: p.Side, Occ: p.Occ, White: pextBits(p.White, p.Occ)}
		}
		ExtractWhites(ps)
		for i := range ps {
			if ps[i] != want[i] {
				t.Fatalf("position %d: got %+v, want %+v", i, ps[i], want[i])
			}
		}
		ExtractWhites(nil)
	})
}

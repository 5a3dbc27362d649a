package packed

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestRank checks rank against numeric order, and nextOcc and pext/pdep
// against their definitions, on random masks of every popcount.
func TestRank(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			a, b := rng.Uint64(), rng.Uint64()
			k := rng.IntN(65)
			a, b = keepBits(a, k, rng), keepBits(b, k, rng)
			if a > b {
				a, b = b, a
			}
			ra, rb := rank(a), rank(b)
			if ra > rb || (ra == rb) != (a == b) || rb >= binom[k][64] {
				t.Fatalf("rank(%#x) = %d, rank(%#x) = %d for k = %d", a, ra, b, rb, k)
			}
			if ra < rb {
				if got := nextOcc(a, k, rb-ra); got != b {
					t.Fatalf("nextOcc(%#x, %d, %d) = %#x, want %#x", a, k, rb-ra, got, b)
				}
			}
			w := rng.Uint64() & b
			if got := pdep(pext(w, b), b); got != w {
				t.Fatalf("pdep(pext(%#x, %#x)) = %#x", w, b, got)
			}
		}
	})
}

// TestNextOccSmallSteps checks nextOcc by the rank of its result for the
// small steps that most new occupancies take, from random masks and from
// masks whose low bits form a run (the next mask then moves the run).
func TestNextOccSmallSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		k := 1 + rng.IntN(63)
		a := keepBits(rng.Uint64(), k, rng)
		if rng.IntN(2) == 0 {
			run := 1 + rng.IntN(k)
			a = keepBits(a&^(1<<run-1)<<1|(1<<run-1), k, rng)
		}
		for d := uint64(1); d <= 5; d++ {
			if rank(a)+d >= binom[k][64] {
				break
			}
			got := nextOcc(a, k, d)
			if bits.OnesCount64(got) != k || rank(got) != rank(a)+d {
				t.Fatalf("nextOcc(%#x, %d, %d) = %#x: %d bits of rank %d, want %d of rank %d", a, k, d, got, bits.OnesCount64(got), rank(got), k, rank(a)+d)
			}
		}
	}
}

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

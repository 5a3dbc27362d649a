//go:build goexperiment.simd && amd64.v3

package board

import "simd/archsimd"

// This file is built with GOEXPERIMENT=simd for x86-64-v3 (the Makefile
// sets both on a CPU with AVX2), as solve's vector move generator is:
// the eight images of a child's occupancy are two 256-bit registers, so
// its canonical occupancy is two ors, three minimums and two compares
// instead of loops over eight words (minImageScalar), which took a
// third of the generation's instructions.

// minImage returns the smallest of the eight masks a[i]|b[i], compared
// as unsigned, and which i reach it (bit i of ties).
func minImage(a, b *[8]uint64) (best uint64, ties uint) {
	// AVX2 compares 64-bit lanes as signed: with the top bit flipped,
	// signed order is the unsigned order of the masks.
	sign := archsimd.BroadcastUint64x4(1 << 63)
	lo := archsimd.LoadUint64x4((*[4]uint64)(a[:4])).Or(archsimd.LoadUint64x4((*[4]uint64)(b[:4]))).Xor(sign).AsInt64x4()
	hi := archsimd.LoadUint64x4((*[4]uint64)(a[4:])).Or(archsimd.LoadUint64x4((*[4]uint64)(b[4:]))).Xor(sign).AsInt64x4()
	m := lo.Merge(hi, hi.Greater(lo))
	s := m.Select128FromPair(1, 0, m) // the halves swapped
	m = m.Merge(s, s.Greater(m))
	s = m.SelectFromPairGrouped(1, 0, m) // each half's two lanes swapped
	m = m.Merge(s, s.Greater(m))         // every lane the minimum
	ties = uint(lo.Equal(m).ToBits()) | uint(hi.Equal(m).ToBits())<<4
	best = uint64(m.GetLo().GetElem(0)) ^ 1<<63
	// Go's own code copies with SSE instructions, each of which, on
	// Intel processors, waits on the upper halves that the 256-bit
	// instructions above left behind: cleared here, or the whole
	// pipeline took 7% to 11% more CPU with this function than without.
	archsimd.ClearAVXUpperBits()
	return best, ties
}

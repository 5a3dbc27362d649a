package packed

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// FuzzWritersRoundTrip writes sorted edges and distinct positions made
// from the fuzzer's seed, in blocks of the fuzzer's size, and requires
// them read back unchanged: the writers keep state from one entry to the
// next and across block boundaries (deltas, histograms, the previous
// ref), which real data exercises only in its own patterns. The entries
// mix both sides, every disc count, repeated positions and occupancies,
// and refs near the limits of their fields.
func FuzzWritersRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint16(300), uint8(0))
	f.Add(uint64(2), uint16(1000), uint8(7))
	f.Add(uint64(3), uint16(50), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, block uint8) {
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		es := randomEdges(rng, int(n)%4000)
		o := Options{BlockEntries: int(block)}
		got, err := decodeEdges(encodeEdges(t, es, o))
		if err != nil {
			t.Fatal(err)
		}
		checkDecoded(t, "edges", got, es)
		var ps []board.Position
		for i, e := range es {
			if i == 0 || e.Pos != es[i-1].Pos {
				ps = append(ps, e.Pos)
			}
		}
		keys, err := DecodeKeys(encodeKeys(t, ps, o))
		if err != nil {
			t.Fatal(err)
		}
		checkDecoded(t, "keys", keys, ps)
	})
}

// randomEdges returns n sorted edges of random positions: a few disc
// counts and occupancies, each shared by several positions and each
// position by several refs, so that every coding path is taken.
func randomEdges(rng *rand.Rand, n int) []Edge {
	es := make([]Edge, 0, n)
	for len(es) < n {
		k := rng.IntN(65)
		var occ uint64
		for bits.OnesCount64(occ) < k {
			occ |= 1 << rng.IntN(64)
		}
		side := board.Color(rng.IntN(2))
		for range 1 + rng.IntN(4) {
			white := occ & rng.Uint64()
			for range 1 + rng.IntN(3) {
				ref := Ref{Blob: uint32(rng.IntN(3)), Index: rng.Uint32N(1 << 16)}
				if rng.IntN(8) == 0 {
					ref = Ref{Blob: ^uint32(0) - uint32(rng.IntN(2)), Index: ^uint32(0) - uint32(rng.IntN(2))}
				}
				es = append(es, Edge{Pos: board.Position{Side: side, Occ: occ, White: white}, Ref: ref})
			}
		}
	}
	es = es[:n]
	slices.SortFunc(es, CompareEdges)
	return es
}

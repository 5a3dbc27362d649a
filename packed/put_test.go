package packed

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// putBlocks encodes the payloads of edge blocks and of key blocks of es,
// cut as the writers cut them (a block for each side and disc count),
// by the block loops (fast) or entry by entry through put and
// refEncoder.put, and returns them one after the other.
func putBlocks(es []Edge, fast bool) (edges, keys []byte) {
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && sameBlock(es[lo].Pos.Side, es[lo].Pos.Occ, es[hi].Pos.Side, es[hi].Pos.Occ) {
			hi++
		}
		block := es[lo:hi]
		lo = hi

		var pos posEncoder
		var ref refEncoder
		var refs []Ref
		for _, e := range block {
			ref.observe(e.Ref, pos.addBits(e.Pos.Side, e.Pos.Occ, WhiteBits(e.Pos)))
			refs = append(refs, e.Ref)
		}
		var w bitWriter
		pos.params(&w)
		ref.params(&w)
		if fast {
			putEdges(&w, &pos, &ref, refs)
		} else {
			for i, r := range refs {
				pos.put(&w, i)
				ref.put(&w, r, pos.repeats(i))
			}
		}
		edges = append(edges, w.bytes()...)

		pos.reset()
		for i, e := range block {
			if i == 0 || e.Pos != block[i-1].Pos {
				pos.addDiscs(e.Pos)
			}
		}
		pos.extractWhites()
		w.reset()
		pos.params(&w)
		if fast {
			pos.putKeys(&w)
		} else {
			for i := range pos.n {
				pos.put(&w, i)
			}
		}
		keys = append(keys, w.bytes()...)
	}
	return edges, keys
}

// checkPut fails unless the block loops write es as the entry-by-entry
// methods do, bit for bit.
func checkPut(t *testing.T, es []Edge) {
	t.Helper()
	fastEdges, fastKeys := putBlocks(es, true)
	edges, keys := putBlocks(es, false)
	if !bytes.Equal(fastEdges, edges) {
		t.Errorf("edge blocks of %d edges: the block loop wrote %d bytes, entry by entry %d, not the same", len(es), len(fastEdges), len(edges))
	}
	if !bytes.Equal(fastKeys, keys) {
		t.Errorf("key blocks of %d edges: the block loop wrote %d bytes, entry by entry %d, not the same", len(es), len(fastKeys), len(keys))
	}
}

func TestPutMatchesPut(t *testing.T) {
	p := position
	full := ^uint64(0)
	tests := []struct {
		name  string
		edges []Edge
	}{
		{"one", []Edge{{p(0, 0x0000001818000000, 0x0000000810000000), Ref{3, 7}}}},
		{"repeats across blobs", []Edge{{p(0, 1, 1), Ref{1, 1}}, {p(0, 1, 1), Ref{1, 2}}, {p(0, 1, 1), Ref{9, 0}}, {p(0, 1, 1), Ref{9, 1 << 31}}}},
		{"widest refs", []Edge{{p(0, 1, 0), Ref{0, 0}}, {p(0, 1, 1), Ref{^uint32(0), ^uint32(0)}}, {p(0, 2, 0), Ref{^uint32(0), 0}}, {p(0, 2, 0), Ref{^uint32(0), ^uint32(0)}}}},
		{"full boards", []Edge{{p(0, full, 0), Ref{0, 1}}, {p(0, full, 1), Ref{0, 1}}, {p(0, full, full>>1), Ref{0, 1}}, {p(0, full, full), Ref{0, 2}}, {p(0, full, full), Ref{0, 3}}}},
		{"56 and 57 discs", []Edge{
			{p(0, full>>8, 0), Ref{0, 0}}, {p(0, full>>8, full>>9), Ref{0, 5}}, {p(0, full>>8&^1|1<<60, 2), Ref{0, 6}},
			{p(1, full>>7, 0), Ref{0, 0}}, {p(1, full>>7, full>>8), Ref{0, 5}}, {p(1, full>>7&^1|1<<60, 2), Ref{0, 6}},
		}},
		{"far occupancies", []Edge{{p(0, 1, 1), Ref{0, 0}}, {p(0, 1<<63, 0), Ref{0, 0}}, {p(0, 3, 0), Ref{0, 0}}, {p(0, 3<<62, 0), Ref{1, 0}}}},
		{"ply 6 children", expansion(t, 6, 0)},
		{"ply 7 children", allEdges(t, 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slices.SortFunc(tt.edges, CompareEdges)
			checkPut(t, tt.edges)
		})
	}
}

// FuzzPutMatchesPut checks the block loops against the entry-by-entry
// methods on the mixtures FuzzWritersRoundTrip writes: every disc
// count, repeats, refs near their limits.
func FuzzPutMatchesPut(f *testing.F) {
	f.Add(uint64(1), uint16(300))
	f.Add(uint64(2), uint16(3000))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16) {
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		checkPut(t, randomEdges(rng, int(n)%4000))
	})
}

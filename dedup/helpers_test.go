package dedup

import (
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

// randPos returns a random position that DecodeEntry accepts.
func randPos(rng *rand.Rand) board.Position {
	occ := rng.Uint64()
	return board.Position{Occ: occ, White: rng.Uint64() & occ, Side: board.Color(rng.IntN(2))}
}

// randEntries returns n random entries. With pool > 0 the positions come
// from a pool of that many (randPool) and the refs from a small range,
// so that duplicate positions, and exact duplicate entries, are common.
func randEntries(rng *rand.Rand, n, pool int) []Entry {
	return entriesFrom(rng, n, randPool(rng, pool))
}

// randPool returns n random positions, a quarter of them twins of the
// one before: the same but for the colour of square 0, the one bit a
// merge's prefix leaves out (prefixOf).
func randPool(rng *rand.Rand, n int) []board.Position {
	var ps []board.Position
	for i := range n {
		p := randPos(rng)
		if i > 0 && rng.IntN(4) == 0 {
			ps[i-1].Occ |= 1
			p = ps[i-1]
			p.White ^= 1
		}
		ps = append(ps, p)
	}
	return ps
}

// entriesFrom returns n random entries of the positions of pool, with
// refs from a small range; of random positions and refs if pool is
// empty.
func entriesFrom(rng *rand.Rand, n int, pool []board.Position) []Entry {
	es := make([]Entry, n)
	for i := range es {
		if len(pool) > 0 {
			es[i] = Entry{Pos: pool[rng.IntN(len(pool))], Ref: Ref{Blob: uint32(rng.IntN(3)), Index: uint32(rng.IntN(4))}}
		} else {
			es[i] = Entry{Pos: randPos(rng), Ref: Ref{Blob: rng.Uint32(), Index: rng.Uint32()}}
		}
	}
	return es
}

// sortedCompact is the reference for SortEntries followed by Compact.
func sortedCompact(es []Entry) []Entry {
	out := slices.Clone(es)
	slices.SortFunc(out, packed.CompareEdges)
	return slices.Compact(out)
}

// encode returns the packed run of es, which must be sorted.
func encode(es []Entry) []byte {
	var b bytes.Buffer
	w, err := packed.NewEdgeWriter(&b, packed.Options{})
	if err != nil {
		panic(err)
	}
	for _, e := range es {
		if err := w.Add(e); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// readerOf returns a reader of the packed run of es.
func readerOf(es []Entry) *packed.EdgeReader { return newReader(bytes.NewReader(encode(es))) }

// readAll reads a run to its end or its first error.
func readAll(r *packed.EdgeReader) []Entry {
	var out []Entry
	for {
		e, ok := r.Next()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// realEntries returns the edges from ply 8 to ply 9 of 8x8 Reversi,
// canonical, in enumeration order: what a worker sorts in practice. Real
// keys are skewed (canonical forms have small Occ, one ply shares its side
// to move), unlike random ones.
var realEntries = sync.OnceValue(func() []Entry {
	b := board.MustNew(8)
	ply := []board.Position{b.Start()}
	var es []Entry
	for n := 0; n <= 8; n++ {
		seen := make(map[board.Position]bool)
		var next []board.Position
		es = es[:0]
		var kids []board.Position
		for i, p := range ply {
			kids, _ = b.Children(p, kids[:0])
			for _, c := range kids {
				es = append(es, Entry{Pos: c, Ref: Ref{Blob: uint32(i / 1000), Index: uint32(i % 1000)}})
				if !seen[c] {
					seen[c] = true
					next = append(next, c)
				}
			}
		}
		ply = next
	}
	return es
})

// newReader reads a packed run.
func newReader(r io.Reader) *packed.EdgeReader { return packed.NewEdgeReader(r) }

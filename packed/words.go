package packed

import (
	"fmt"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
)

// A Word is an edge of one parent blob in 128 bits, as an expansion task
// sorts its edges: Occ is the child's occupied squares; Low holds its
// side to move in the top bit, then its white bits (WhiteBits), then the
// parent's index field in the low bits (WordRefs says how many, and how
// the field names the parent). For one side, words sort as their edges
// do when compared as 128-bit numbers, Occ first.
type Word struct{ Occ, Low uint64 }

// WordRefs says how the index fields of a blob's words name parents.
type WordRefs struct {
	// IndexBits is the width of the index field.
	IndexBits uint
	// Blob is the parent blob every ref names.
	Blob uint32
	// NoneAtZero says a field of 0 names no parent (the zero Ref), and
	// Less what is taken off any other field to give the parent's index:
	// 0 or 1.
	NoneAtZero bool
	Less       uint32
}

// ref is the ref of index field f.
func (r WordRefs) ref(f uint64) Ref {
	if r.NoneAtZero && f == 0 {
		return Ref{}
	}
	return Ref{Blob: r.Blob, Index: uint32(f) - r.Less}
}

// AddWords adds the edges of es, a blob's words sorted by side and then
// as 128-bit numbers, which must not sort before the edges added before
// them, and returns how many it added: equal words are one edge, added
// once. It writes what as many calls of AddBits would, bit for bit, at
// about two thirds of their cost: the common word, of the block's side
// and disc count and after its first edge, is taken by a loop that holds
// the block's state in locals, with an order check of two comparisons;
// the others go through AddBits. The loop does what AddBits does
// (posEncoder.addBits, refEncoder.observe) for such a word, and
// TestAddWords compares their bytes, so that a change to one that the
// other misses fails there.
func (w *EdgeWriter) AddWords(es []Word, r WordRefs) (int, error) {
	n := 0
	mask := uint64(1)<<r.IndexBits - 1
	for i := 0; i < len(es); {
		// The first edge of a block, or of a call, or of the other side,
		// or the one after an equal word: AddBits.
		if i > 0 && es[i] == es[i-1] {
			i++
			continue
		}
		e := es[i]
		side := board.Color(e.Low >> 63)
		white := e.Low &^ (1 << 63) >> r.IndexBits
		if err := w.AddBits(side, e.Occ, white, r.ref(e.Low&mask)); err != nil {
			return n, err
		}
		n++
		i++
		// The rest of the block, while the words keep to its side: the
		// state AddBits keeps, in locals.
		p := &w.pos
		room := min(len(es), i+w.opts.BlockEntries-p.n)
		if room <= i || p.n == 0 {
			continue
		}
		last, occ, prevWhite := e, p.occ, p.white
		dOcc, whites, refs := p.dOcc, p.whites, w.refs
		k := p.n - 1 // the index of the next edge's delta and white bits
		hOcc := &p.hOcc
		re := &w.ref
		prev := re.prev
		maxIndex := re.maxIndex
		maxBlob := re.maxBlob
		discs := bits.OnesCount64(p.occ0)
		j := i
		for ; j < room; j++ {
			x := es[j]
			if x.Low>>63 != last.Low>>63 || k >= len(dOcc) || k >= len(whites) || k+1 >= len(refs) ||
				bits.OnesCount64(x.Occ) != discs {
				break
			}
			if x.Occ < last.Occ || x.Occ == last.Occ && x.Low <= last.Low {
				if x == last {
					continue
				}
				return n, fmt.Errorf("%w: word %x after %x", ErrOrder, x, last)
			}
			wb := x.Low &^ (1 << 63) >> r.IndexBits
			ref := r.ref(x.Low & mask)
			d := x.Occ - occ
			if d != 0 {
				hOcc.add(d - 1)
			}
			dOcc[k], whites[k], refs[k+1] = d, wb, ref
			if d == 0 && wb == prevWhite {
				db := ref.Blob - prev.Blob
				re.hBlob.add(uint64(db))
				if db == 0 {
					re.hIndex.add(uint64(ref.Index - prev.Index))
				}
			}
			maxBlob, maxIndex = max(maxBlob, ref.Blob), max(maxIndex, ref.Index)
			prev, occ, prevWhite, last = ref, x.Occ, wb, x
			k++
			n++
		}
		p.n = k + 1
		p.occ, p.white = occ, prevWhite
		re.prev, re.maxIndex, re.maxBlob = prev, maxIndex, maxBlob
		w.last = edgeBits{board.Color(last.Low >> 63), last.Occ, prevWhite, prev}
		i = j
	}
	return n, nil
}

package packed

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// The writers' block loops, putKeys and putEdges, write what put and
// refEncoder.put write entry by entry, bit for bit the same, but keep the
// bit writer's state in locals: a method on the writer loads and stores
// its buffer, accumulator and count around every field, which made
// encoding cost about as much as generating the edges
// (docs/performance.md). An entry's codes are joined into one or two,
// each put with one unaligned store (putBits); the rare entries that do
// not fit (more than 56 discs, a long gamma code, a ref into another
// blob) go through the methods, with the state handed over and taken
// back.

// putSlack is the spare capacity a loop keeps after its buffer's length
// before an entry: room for the 8-byte stores of its codes, at most
// three, each starting at most 7 bytes after the one before.
const putSlack = 32

// maxPut is the longest code putBits takes: with fewer than 8 pending
// bits, one 64-bit store holds them all.
const maxPut = 56

// putBits appends the low n bits of v (n at most maxPut, nb below 8, no
// bits of v above n) to the pending bits acc, nb of them, storing the
// whole bytes at the end of buf, which has 8 bytes of spare capacity. It
// returns buf with them, and the bits still pending.
func putBits(buf []byte, acc uint64, nb uint, v uint64, n uint) ([]byte, uint64, uint) {
	acc |= v << (nb & 63)
	nb += n
	l := len(buf)
	binary.LittleEndian.PutUint64(buf[l:l+8], acc)
	full := nb &^ 7
	return buf[:l+int(full>>3)], acc >> (full & 63), nb & 7
}

// gammaCode returns gamma(v, k) as bitWriter.gamma writes it, the first
// bit in bit 0, and its length, or false if it is longer than maxPut.
func gammaCode(v uint64, k uint) (uint64, uint, bool) {
	q := v >> (k & 63)
	low := v & (1<<(k&63) - 1)
	n := uint(bits.Len64(q))
	if n == 0 {
		return 1 | low<<1, 1 + k, 1+k <= maxPut
	}
	if 2*n+k > maxPut {
		return 0, 0, false
	}
	return 1<<n | (q&(1<<(n-1)-1))<<(n+1) | low<<(2*n), 2*n + k, true
}

// grow makes room for an entry's codes after buf.
func grow(buf []byte) []byte {
	if cap(buf)-len(buf) < putSlack {
		buf = slices.Grow(buf, max(putSlack, len(buf)))
	}
	return buf
}

// take readies w's state for a loop: its pending bits brought below 8 by
// storing the whole bytes.
func (w *bitWriter) take() ([]byte, uint64, uint) {
	return putBits(grow(w.buf), w.acc, w.nb, 0, 0)
}

// give hands a loop's state back to w.
func (w *bitWriter) give(buf []byte, acc uint64, nb uint) { w.buf, w.acc, w.nb = buf, acc, nb }

// posCode returns the prefix of position i of the block, i from 1 on
// and not a repeat, as put writes it (with the occupancy's delta), and
// false if it is longer than maxPut.
func (e *posEncoder) posCode(i int) (uint64, uint, bool) {
	d := e.dOcc[i-1]
	if d == 0 {
		return prefixSameOcc, 1, true
	}
	g, n, ok := gammaCode(d-1, e.kOcc)
	return prefixNewOcc | g<<2, 2 + n, ok && 2+n <= maxPut
}

// putKeys writes the positions of a key block after its parameters.
// Keys do not repeat: KeyWriter.Add refuses a position not after the
// last.
func (e *posEncoder) putKeys(w *bitWriter) {
	e.put(w, 0)
	k := uint(bits.OnesCount64(e.occ0))
	buf, acc, nb := w.take()
	for i := 1; i < e.n; i++ {
		buf = grow(buf)
		c, n, ok := e.posCode(i)
		switch white := e.whites[i-1]; {
		case ok && n+k <= maxPut:
			buf, acc, nb = putBits(buf, acc, nb, c|white<<n, n+k)
		case ok && k <= maxPut:
			buf, acc, nb = putBits(buf, acc, nb, c, n)
			buf, acc, nb = putBits(buf, acc, nb, white, k)
		default:
			w.give(buf, acc, nb)
			e.put(w, i)
			buf, acc, nb = w.take()
		}
	}
	w.give(buf, acc, nb)
}

// putEdges writes the edges of an edge block after its parameters: each
// position, then its ref, refs[i] the ref of position i. It writes a
// position as putKeys does, in the same lines: a function for it, shared
// by both, is too large to inline, and the call made the edge loop
// slower.
func putEdges(w *bitWriter, e *posEncoder, r *refEncoder, refs []Ref) {
	e.put(w, 0)
	r.put(w, refs[0], false)
	k := uint(bits.OnesCount64(e.occ0))
	wIndex := r.wIndex
	// A later ref of a list in the same blob starts with gamma(0, kBlob),
	// and follows a repeat's prefix.
	sameBlob, sameBlobLen, _ := gammaCode(0, r.kBlob)
	sameBlob, sameBlobLen = prefixRepeat|sameBlob<<2, 2+sameBlobLen
	prevWhite, prev := e.white0, r.prev
	buf, acc, nb := w.take()
	for i := 1; i < len(refs); i++ {
		buf = grow(buf)
		white, ref := e.whites[i-1], refs[i]
		if e.dOcc[i-1] == 0 && white == prevWhite {
			// A repeat, and a later ref of its list: in the same blob,
			// the prefix, gamma(0, kBlob) and the index's delta in one
			// code where they fit.
			c, n, ok := gammaCode(uint64(ref.Index-prev.Index), r.kIndex)
			if ok && ref.Blob == prev.Blob && sameBlobLen+n <= maxPut {
				buf, acc, nb = putBits(buf, acc, nb, sameBlob|c<<sameBlobLen, sameBlobLen+n)
			} else {
				buf, acc, nb = putBits(buf, acc, nb, prefixRepeat, 2)
				w.give(buf, acc, nb)
				r.prev = prev
				r.put(w, ref, true)
				buf, acc, nb = w.take()
			}
			prev = ref
			continue
		}
		prevWhite = white
		c, n, ok := e.posCode(i)
		switch {
		case ok && n+k <= maxPut:
			buf, acc, nb = putBits(buf, acc, nb, c|white<<n, n+k)
		case ok && k <= maxPut:
			buf, acc, nb = putBits(buf, acc, nb, c, n)
			buf, acc, nb = putBits(buf, acc, nb, white, k)
		default:
			w.give(buf, acc, nb)
			e.put(w, i)
			buf, acc, nb = w.take()
		}
		// The first ref of a list: in the same blob, a one and the index
		// (wIndex is at most 32, so it fits).
		if ref.Blob == prev.Blob {
			buf, acc, nb = putBits(buf, acc, nb, 1|uint64(ref.Index)<<1, 1+wIndex)
		} else {
			w.give(buf, acc, nb)
			r.prev = prev
			r.put(w, ref, false)
			buf, acc, nb = w.take()
		}
		prev = ref
	}
	w.give(buf, acc, nb)
	r.prev = prev
}

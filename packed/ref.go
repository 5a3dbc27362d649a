package packed

import (
	"cmp"
	"fmt"
	"math/bits"
)

// Ref names a parent position: the index of its ply's final blob and its
// index within that blob.
type Ref struct{ Blob, Index uint32 }

// compareRefs orders refs by Blob, then Index.
func compareRefs(a, b Ref) int {
	return cmp.Compare(uint64(a.Blob)<<32|uint64(a.Index), uint64(b.Blob)<<32|uint64(b.Index))
}

// Refs come in lists: the parents of one position, sorted by (Blob,
// Index). The first ref of a list has no useful predecessor (parents are
// scattered), so it is stored as
//
//	1 bit: same Blob as the previous ref in the block (the block's first: 0)
//	if not: Blob in blobWidth bits
//	Index in indexWidth bits
//
// and each later ref of the list as
//
//	gamma(Blob - previous Blob, kBlob)
//	if that is 0: gamma(Index - previous Index, kIndex)
//	else:         Index in indexWidth bits
//
// The widths are those of the largest Blob and Index in the block, so an
// expansion run, whose refs all name one blob of at most 65536 positions,
// pays 1+16 bits a ref. Parameters: kBlob, kIndex, blobWidth, indexWidth,
// 6 bits each.

// refEncoder chooses a block's parameters and writes its refs.
type refEncoder struct {
	maxBlob, maxIndex uint32
	hBlob, hIndex     lenHist
	prev              Ref
	kBlob, kIndex     uint
	wBlob, wIndex     uint
}

func (e *refEncoder) reset() { *e = refEncoder{} }

// observe adds r, which continues the previous ref's list if cont, to the
// plan.
func (e *refEncoder) observe(r Ref, cont bool) {
	e.maxBlob, e.maxIndex = max(e.maxBlob, r.Blob), max(e.maxIndex, r.Index)
	if cont {
		d := r.Blob - e.prev.Blob
		e.hBlob.add(uint64(d))
		if d == 0 {
			e.hIndex.add(uint64(r.Index - e.prev.Index))
		}
	}
	e.prev = r
}

// params chooses and writes the parameters, and readies put.
func (e *refEncoder) params(w *bitWriter) {
	e.kBlob, e.kIndex = e.hBlob.best(), e.hIndex.best()
	e.wBlob, e.wIndex = uint(bits.Len32(e.maxBlob)), uint(bits.Len32(e.maxIndex))
	for _, v := range [...]uint{e.kBlob, e.kIndex, e.wBlob, e.wIndex} {
		w.write(uint64(v), 6)
	}
	e.prev = Ref{}
}

// put writes r, the refs given to observe in the same order.
func (e *refEncoder) put(w *bitWriter, r Ref, cont bool) {
	switch {
	case !cont && r.Blob == e.prev.Blob:
		w.write(1, 1)
		w.write(uint64(r.Index), e.wIndex)
	case !cont:
		w.write(0, 1)
		w.write(uint64(r.Blob), e.wBlob)
		w.write(uint64(r.Index), e.wIndex)
	case r.Blob == e.prev.Blob:
		w.gamma(0, e.kBlob)
		w.gamma(uint64(r.Index-e.prev.Index), e.kIndex)
	default:
		w.gamma(uint64(r.Blob-e.prev.Blob), e.kBlob)
		w.write(uint64(r.Index), e.wIndex)
	}
	e.prev = r
}

// refDecoder reads what refEncoder wrote.
type refDecoder struct {
	prev          Ref
	kBlob, kIndex uint
	wBlob, wIndex uint
}

func (d *refDecoder) params(r *bitReader) error {
	d.kBlob, d.kIndex = uint(r.read(6)), uint(r.read(6))
	d.wBlob, d.wIndex = uint(r.read(6)), uint(r.read(6))
	d.prev = Ref{}
	if d.wBlob > 32 || d.wIndex > 32 {
		return fmt.Errorf("%w: ref widths %d and %d", ErrCorrupt, d.wBlob, d.wIndex)
	}
	return nil
}

// first reads the first ref of a list at c, where prev is the ref
// before it in the block, and returns the cursor after it.
func (d *refDecoder) first(buf []byte, c cursor, prev Ref) (Ref, cursor) {
	if 1+d.wBlob > c.avail {
		c = cursorAt(buf, c.pos)
	}
	if c.x&1 == 0 {
		prev.Blob = uint32(c.x >> 1 & (1<<d.wBlob - 1))
		c = c.skip(d.wBlob)
	}
	c = c.skip(1)
	// Both widths at 32 need more than one peek.
	if d.wIndex > c.avail {
		c = cursorAt(buf, c.pos)
	}
	prev.Index = uint32(c.x & (1<<d.wIndex - 1))
	return prev, c.skip(d.wIndex)
}

// cont reads a later ref of a list at c, where prev is the ref before
// it, and returns the cursor after it.
func (d *refDecoder) cont(b *bitReader, c cursor, prev Ref) (Ref, cursor, error) {
	db, c, ok := c.gamma(b, d.kBlob)
	if !ok || db > uint64(^prev.Blob) {
		return Ref{}, c, fmt.Errorf("%w: blob delta out of range", ErrCorrupt)
	}
	if db != 0 {
		if d.wIndex > c.avail {
			c = cursorAt(b.buf, c.pos)
		}
		return Ref{Blob: prev.Blob + uint32(db), Index: uint32(c.x & (1<<d.wIndex - 1))}, c.skip(d.wIndex), nil
	}
	di, c, ok := c.gamma(b, d.kIndex)
	if !ok || di > uint64(^prev.Index) {
		return Ref{}, c, fmt.Errorf("%w: index delta out of range", ErrCorrupt)
	}
	return Ref{Blob: prev.Blob, Index: prev.Index + uint32(di)}, c, nil
}

package packed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/reversi-cloud/reversi/board"
)

// DefaultKeyBlock is the default number of positions a key block holds:
// about 28 KiB at ply 9, so a final blob of 65536 positions has four.
const DefaultKeyBlock = 16384

// A key blob is key blocks of sorted distinct positions (position.go with
// strict deltas), then the key index (keyindex.go): one index block and a
// fixed-size footer.

// KeyWriter writes the sorted distinct positions of a final blob.
type KeyWriter struct {
	blocks  blockWriter
	bits    bitWriter
	opts    Options
	pos     posEncoder
	index   []indexEntry
	count   int64
	last    board.Position
	started bool
	scratch *scratch // until Close
}

// NewKeyWriter returns a writer of a key blob to w.
func NewKeyWriter(w io.Writer, o Options) (*KeyWriter, error) {
	o, err := o.withDefault(DefaultKeyBlock)
	if err != nil {
		return nil, err
	}
	kw := &KeyWriter{blocks: blockWriter{w: w, kind: kindKeys}, opts: o}
	kw.scratch = takeScratch(&kw.pos, &kw.bits, &kw.blocks)
	return kw, nil
}

// Add appends p, which must sort after the previous position.
func (w *KeyWriter) Add(p board.Position) error {
	if w.started && board.Compare(p, w.last) <= 0 {
		return fmt.Errorf("%w: position %v after %v", ErrOrder, p, w.last)
	}
	if n := w.pos.n; n == w.opts.BlockEntries || n > 0 && !sameBlock(w.last.Side, w.last.Occ, p.Side, p.Occ) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.last, w.started = p, true
	w.pos.addDiscs(p)
	return nil
}

// AddKeys is Add for each position of ps in turn, at about two thirds
// of the cost a position, for a caller that can hold positions back:
// within a block, after its first position and while they keep to its
// side and disc count, a loop holding the block's state in locals takes
// them, checking their order with two comparisons; Add takes the others.
// The loop does what Add does (posEncoder.addDiscs) for such a position,
// and TestAddKeys compares their bytes.
func (w *KeyWriter) AddKeys(ps []board.Position) error {
	for i := 0; i < len(ps); {
		if err := w.Add(ps[i]); err != nil {
			return err
		}
		i++
		e := &w.pos
		room := min(len(ps), i+w.opts.BlockEntries-e.n)
		if room <= i {
			continue
		}
		last, discs := w.last, bits.OnesCount64(e.occ0)
		dOcc, whites, hOcc := e.dOcc, e.whites, &e.hOcc
		k := e.n - 1 // the index of the next position's delta and white discs
		j := i
		for ; j < room; j++ {
			p := ps[j]
			if p.Side != last.Side || k >= len(dOcc) || k >= len(whites) || bits.OnesCount64(p.Occ) != discs {
				break
			}
			if p.Occ < last.Occ || p.Occ == last.Occ && p.White <= last.White {
				return fmt.Errorf("%w: position %v after %v", ErrOrder, p, last)
			}
			d := p.Occ - last.Occ
			if d != 0 {
				hOcc.add(d - 1)
			}
			dOcc[k], whites[k] = d, p.White
			last = p
			k++
		}
		e.n, e.occ, e.white = k+1, last.Occ, last.White
		w.last = last
		i = j
	}
	return nil
}

func (w *KeyWriter) flush() error {
	n := w.pos.n
	if n == 0 {
		return w.blocks.err
	}
	// The block's first position, its white discs as addDiscs took them,
	// before extractWhites turns them into bits.
	first := board.Position{Side: w.pos.side, Occ: w.pos.occ0, White: w.pos.white0}
	w.index = append(w.index, indexEntry{first: first, off: w.blocks.off, number: w.count})
	w.pos.extractWhites()
	w.bits.reset()
	w.pos.params(&w.bits)
	w.pos.putKeys(&w.bits)
	w.pos.reset()
	w.count += int64(n)
	return w.blocks.write(n, w.bits.bytes())
}

// Close writes the remaining positions and the key index; it does not
// close the underlying writer. The writer is done with then.
func (w *KeyWriter) Close() error {
	if err := w.flush(); err != nil {
		return err
	}
	err := w.writeIndex()
	if w.scratch != nil {
		w.scratch.give(&w.pos, &w.bits, &w.blocks)
		w.scratch = nil
	}
	return err
}

// Count returns the number of positions added so far.
func (w *KeyWriter) Count() int64 { return w.count + int64(w.pos.n) }

// KeyReader reads the positions of a key blob in order, or of one key
// block that KeyIndex locates. It decodes a block at a time (up to
// BlockEntries positions of 24 bytes), checked whole before any of its
// positions is returned. Reading a whole blob, it stops at the key index
// and checks that the index block is there and counts the blocks read;
// OpenKeyIndex checks the rest of the index.
type KeyReader struct {
	stream
	dec   posDecoder
	block []board.Position // the current block, decoded
	next  int              // the index in block of the position Next returns next
	whole bool             // reading a whole blob, which ends in its index
	last  board.Position   // the last position decoded, once r.n > 0
}

// NewKeyReader returns a reader of the key blob in r.
func NewKeyReader(r io.Reader) *KeyReader {
	kr := newKeyReader(r)
	kr.whole = true
	return kr
}

// newKeyReader returns a reader of key blocks without an index after them.
func newKeyReader(r io.Reader) *KeyReader {
	return &KeyReader{stream: newStream(r, kindKeys)}
}

// Next returns the next position. It returns false at the end of the key
// blocks or on the first error; Err tells which.
func (r *KeyReader) Next() (board.Position, bool) {
	if i := r.next; i < len(r.block) {
		r.next++
		return r.block[i], true
	}
	var ok bool
	if r.block, ok = r.decode(r.block[:0]); !ok {
		return board.Position{}, false
	}
	r.next = 1
	return r.block[0], true
}

// decode appends the next key block's positions to dst, checked whole,
// and reports whether there was one.
func (r *KeyReader) decode(dst []board.Position) ([]board.Position, bool) {
	r.next = 0
	if r.err != nil {
		return dst, false
	}
	if err := r.blocks.next(kindIndex); err != nil {
		r.err = err
		if err == io.EOF && r.whole {
			r.checkEnd()
		}
		return dst, false
	}
	b := &r.bits
	b.init(r.blocks.data)
	r.dec.params(b)
	base := len(dst)
	dst, err := r.dec.decodeKeys(b, r.blocks.count, dst)
	if err == nil && r.n > 0 && board.Compare(dst[base], r.last) <= 0 {
		err = fmt.Errorf("%w: block starts with %v after %v", ErrCorrupt, dst[base], r.last)
	}
	if err != nil {
		r.fail(err)
		return dst[:base], false
	}
	r.n += int64(len(dst) - base)
	r.last = dst[len(dst)-1]
	return dst, true
}

// checkEnd checks, at the end of a whole key blob, that the key index
// came and counts the key blocks read.
func (r *KeyReader) checkEnd() {
	b := &r.blocks
	switch {
	case !b.stopped:
		r.err = fmt.Errorf("%w: key blob at offset %d ends without its index: %w", ErrCorrupt, b.off, io.ErrUnexpectedEOF)
	case b.count != b.blocks || int(binary.LittleEndian.Uint32(b.head[8:])) != b.count*indexRecordLen:
		r.err = fmt.Errorf("%w: key index header %x at offset %d does not fit the %d blocks read", ErrCorrupt, b.head, b.off, b.blocks)
	}
}

// EncodeKeys is a whole key blob of ps, which must ascend strictly.
func EncodeKeys(ps []board.Position) ([]byte, error) {
	var buf bytes.Buffer
	w, err := NewKeyWriter(&buf, Options{})
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if err := w.Add(p); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeKeys reads a whole key blob.
func DecodeKeys(b []byte) ([]board.Position, error) { return DecodeKeysTo(nil, b) }

// DecodeKeysTo reads a whole key blob, appending its positions to dst,
// so that a caller that reads blob after blob can reuse one slice.
func DecodeKeysTo(dst []board.Position, b []byte) ([]board.Position, error) {
	r := NewKeyReader(bytes.NewReader(b))
	out := dst
	// The index says how many positions follow: grow once. A corrupt
	// count only sizes the slice (each position takes at least a bit);
	// the reader still checks every block.
	if ix, err := OpenKeyIndex(bytes.NewReader(b), int64(len(b))); err == nil {
		out = slices.Grow(out, int(min(ix.Positions, 8*int64(len(b)))))
	}
	// Blocks decode straight into out.
	for ok := true; ok; {
		out, ok = r.decode(out)
	}
	return out, r.Err()
}

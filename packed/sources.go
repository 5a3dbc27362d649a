package packed

import (
	"fmt"
	"io"
	"slices"
)

// DefaultSourceBlock is the default number of positions whose sources a
// block holds: about 5 KiB at 8x8 ply 9. A reader that wants the sources
// of a few positions (a resolution's known results) decodes the part of
// each one's block before it, so small blocks cost it less: 6 times less
// for blocks of 2,048 than of 8,192 (BenchmarkSourceSkip), for 0.1% more
// bytes at plies 9 and 10 (TestSizes; 0.4% with 1,024); and the writer,
// whose block stays in cache, is a sixth faster.
const DefaultSourceBlock = 2048

// A source block holds, after kCount (6 bits) and the ref parameters,
// for each position gamma(number of refs - 1, kCount) and then its refs
// (ref.go), the first starting a list, the others continuing it.

// SourceWriter writes the sources of consecutive positions of a final
// blob: for each, its parents, sorted by (Blob, Index), at least one.
type SourceWriter struct {
	blocks blockWriter
	bits   bitWriter
	opts   Options
	counts []int // refs per buffered position
	refs   []Ref
	ref    refEncoder
	hCount lenHist // of counts less one
}

// NewSourceWriter returns a writer of source blocks to w.
func NewSourceWriter(w io.Writer, o Options) (*SourceWriter, error) {
	o, err := o.withDefault(DefaultSourceBlock)
	if err != nil {
		return nil, err
	}
	return &SourceWriter{blocks: blockWriter{w: w, kind: kindSources}, opts: o}, nil
}

// Add appends the sources of the next position.
func (w *SourceWriter) Add(refs []Ref) error {
	if len(refs) == 0 {
		return fmt.Errorf("%w: a position without sources", ErrOrder)
	}
	if !slices.IsSortedFunc(refs, compareRefs) {
		return fmt.Errorf("%w: sources %v", ErrOrder, refs)
	}
	if len(w.counts) == w.opts.BlockEntries {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.hCount.add(uint64(len(refs) - 1))
	for j, r := range refs {
		w.ref.observe(r, j > 0)
	}
	w.counts = append(w.counts, len(refs))
	w.refs = append(w.refs, refs...)
	return nil
}

// Close writes out the sources added so far; it does not close the
// underlying writer.
func (w *SourceWriter) Close() error { return w.flush() }

func (w *SourceWriter) flush() error {
	if len(w.counts) == 0 {
		return w.blocks.err
	}
	w.bits.reset()
	kCount := w.hCount.best()
	w.bits.write(uint64(kCount), 6)
	w.ref.params(&w.bits)
	refs := w.refs
	for _, n := range w.counts {
		w.bits.gamma(uint64(n-1), kCount)
		for j, r := range refs[:n] {
			w.ref.put(&w.bits, r, j > 0)
		}
		refs = refs[n:]
	}
	n := len(w.counts)
	w.counts, w.refs = w.counts[:0], w.refs[:0]
	w.ref.reset()
	w.hCount = lenHist{}
	return w.blocks.write(n, w.bits.bytes())
}

// SourceReader reads source blocks until the end of its input.
type SourceReader struct {
	stream
	kCount uint
	ref    refDecoder
	params func(*bitReader) error
}

// NewSourceReader returns a reader of the source blocks in r.
func NewSourceReader(r io.Reader) *SourceReader {
	sr := &SourceReader{stream: newStream(r, kindSources)}
	sr.params = func(b *bitReader) error {
		sr.kCount = uint(b.read(6))
		return sr.ref.params(b)
	}
	return sr
}

// Skip passes over the sources of the next n positions, and returns
// false as Next does. The rest of a block that it passes over whole is
// not decoded (blocks are independent), only read and its checksum
// checked: a resolution wants the sources of a few known positions among
// hundreds of thousands. buf is scratch space for the positions it
// decodes, returned for reuse.
func (r *SourceReader) Skip(n int64, buf []Ref) ([]Ref, bool) {
	for n > 0 {
		if !r.ready(r.params) {
			return buf, false
		}
		if int64(r.left) <= n {
			n -= int64(r.left)
			r.n += int64(r.left)
			r.left = 0
			continue
		}
		var ok bool
		if buf, ok = r.Next(buf); !ok {
			return buf, false
		}
		n--
	}
	return buf, true
}

// Next returns the sources of the next position, appended to buf[:0].
// It returns false at the end of the input or on the first error; Err
// tells which.
func (r *SourceReader) Next(buf []Ref) ([]Ref, bool) {
	if !r.ready(r.params) {
		return nil, false
	}
	b := &r.bits
	n, c, ok := cursorAt(b.buf, uint(b.pos)).gamma(b, r.kCount)
	// Every ref takes at least a bit, which bounds what a corrupt count
	// can make us append.
	if !ok || n >= uint64(len(b.buf))*8 {
		r.fail(fmt.Errorf("%w: bad source count", ErrCorrupt))
		return nil, false
	}
	ref, c := r.ref.first(b.buf, c, r.ref.prev)
	buf = append(buf[:0], ref)
	for range n {
		var err error
		if ref, c, err = r.ref.cont(b, c, ref); err != nil {
			r.fail(err)
			return nil, false
		}
		buf = append(buf, ref)
	}
	r.ref.prev = ref
	b.pos = int(c.pos)
	if !r.done() {
		return nil, false
	}
	return buf, true
}

package packed

import (
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/board"
)

// Edge is one entry of a sorted run: a child position and one parent
// that leads to it.
type Edge struct {
	Pos board.Position
	Ref Ref
}

// CompareEdges orders edges by position (board.Compare), then by Ref.
func CompareEdges(a, b Edge) int {
	if c := board.Compare(a.Pos, b.Pos); c != 0 {
		return c
	}
	return compareRefs(a.Ref, b.Ref)
}

// DefaultEdgeBlock is the default number of edges a block holds: about
// 8 KiB of expansion run at ply 9 and 10, 64 KiB decoded. A merge holds
// a decoded block of each of its runs, up to 2,048 of them in wide
// buckets (runstore.Sizes): with 8,192 edges a block, two such merges
// took 971 MiB at 8x8 ply 14, and the smaller blocks cost no more CPU
// (docs/performance.md).
const DefaultEdgeBlock = 2048

// An edge block holds, after the position and ref parameters, each edge's
// position (position.go; an edge whose position equals the previous one's
// costs its two zero deltas, 1+kOcc+1+kWhite bits) and then its ref
// (ref.go), which continues the previous edge's list when the position
// repeats.

// EdgeWriter writes sorted edges as edge blocks. A run may be cut into
// segments, each a whole number of blocks, so that a reader given only
// one segment's bytes decodes exactly its edges.
type EdgeWriter struct {
	blocks  blockWriter
	bits    bitWriter
	opts    Options
	pos     posEncoder
	ref     refEncoder
	refs    []Ref // of the block, its first pos.n, kept at full length as pos's buffers are
	last    edgeBits
	started bool
	scratch *scratch // until Close
}

// edgeBits is an edge as AddBits takes it. Its fields compare in the
// order of CompareEdges: side, occupancy, white bits (which for one
// occupancy sort as the white discs do), then the ref.
type edgeBits struct {
	side       board.Color
	occ, white uint64
	ref        Ref
}

func (e edgeBits) less(f edgeBits) bool {
	switch {
	case e.side != f.side:
		return e.side < f.side
	case e.occ != f.occ:
		return e.occ < f.occ
	case e.white != f.white:
		return e.white < f.white
	}
	return compareRefs(e.ref, f.ref) < 0
}

func (e edgeBits) String() string {
	return fmt.Sprintf("%v %v", board.Position{Side: e.side, Occ: e.occ, White: WhiteDiscs(e.occ, e.white)}, e.ref)
}

// NewEdgeWriter returns a writer of edge blocks to w.
func NewEdgeWriter(w io.Writer, o Options) (*EdgeWriter, error) {
	o, err := o.withDefault(DefaultEdgeBlock)
	if err != nil {
		return nil, err
	}
	ew := &EdgeWriter{blocks: blockWriter{w: w, kind: kindEdges}, opts: o}
	ew.scratch = takeScratch(&ew.pos, &ew.bits, &ew.blocks)
	ew.refs = ew.scratch.refs[:cap(ew.scratch.refs)]
	return ew, nil
}

// Add appends e, which must not sort before the previous edge; equal
// edges are allowed.
func (w *EdgeWriter) Add(e Edge) error {
	return w.AddBits(e.Pos.Side, e.Pos.Occ, WhiteBits(e.Pos), e.Ref)
}

// AddBits is Add for the edge from parent r to the position of side to
// move side, occupancy occ and white bits white (WhiteBits): a caller
// that holds its positions' white bits saves turning them into discs,
// which the writer would turn back.
func (w *EdgeWriter) AddBits(side board.Color, occ, white uint64, r Ref) error {
	e := edgeBits{side, occ, white, r}
	if w.started && e.less(w.last) {
		return fmt.Errorf("%w: edge %v after %v", ErrOrder, e, w.last)
	}
	if n := w.pos.n; n == w.opts.BlockEntries || n > 0 && !sameBlock(w.last.side, w.last.occ, side, occ) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.last, w.started = e, true
	w.ref.observe(r, w.pos.addBits(side, occ, white))
	if i := w.pos.n - 1; i < len(w.refs) {
		w.refs[i] = r
	} else {
		w.refs = setPast(w.refs, i, r)
	}
	return nil
}

// EndSegment writes out the edges added so far and returns the offset
// of the next byte: the end of the segment, and the start of the next.
func (w *EdgeWriter) EndSegment() (int64, error) {
	err := w.flush()
	return w.blocks.off, err
}

// Close writes out the edges added so far; it does not close the
// underlying writer. The writer is done with then.
func (w *EdgeWriter) Close() error {
	err := w.flush()
	if w.scratch != nil {
		w.scratch.refs, w.refs = w.refs, nil
		w.scratch.give(&w.pos, &w.bits, &w.blocks)
		w.scratch = nil
	}
	return err
}

func (w *EdgeWriter) flush() error {
	n := w.pos.n
	if n == 0 {
		return w.blocks.err
	}
	w.bits.reset()
	w.pos.params(&w.bits)
	w.ref.params(&w.bits)
	putEdges(&w.bits, &w.pos, &w.ref, w.refs[:n])
	w.pos.reset()
	w.ref.reset()
	return w.blocks.write(n, w.bits.bytes())
}

// EdgeReader reads edge blocks until the end of its input, checking that
// the edges are sorted. It decodes a block at a time into a buffer (up to
// BlockEntries edges of 32 bytes), so that Next, the merge's inner loop,
// is a slice read; NewEdgeReaderAhead makes one that reads and decodes
// the next blocks on other goroutines while its consumer works.
type EdgeReader struct {
	stream
	dec   edgeDecoder
	block []Edge // the current block, decoded
	next  int    // the index in block of the edge Next returns next
	ahead *readAhead
	cur   *aheadBlock  // the block being returned, when reading ahead
	bufs  *readBuffers // lent to blocks.buf and block until Close, when not reading ahead
}

// NewEdgeReader returns a reader of the edge blocks in r: a whole run, or
// one segment of it. Closing it when done lets the next reader reuse its
// memory.
func NewEdgeReader(r io.Reader) *EdgeReader {
	er := &EdgeReader{stream: newStream(r, kindEdges), bufs: takeReadBuffers()}
	er.blocks.buf, er.block = er.bufs.raw, er.bufs.edges
	return er
}

// Next returns the next edge. It returns false at the end of the input or
// on the first error; Err tells which.
func (r *EdgeReader) Next() (Edge, bool) {
	if i := r.next; i < len(r.block) {
		r.next++
		return r.block[i], true
	}
	if !r.decode() {
		return Edge{}, false
	}
	r.next = 1
	return r.block[0], true
}

// decode makes the next block current. A block is checked whole before
// any of its edges is returned.
func (r *EdgeReader) decode() bool {
	if r.err != nil {
		return false
	}
	var last Edge
	started := len(r.block) > 0
	if started {
		last = r.block[len(r.block)-1]
	}
	r.block = r.block[:0]
	var off int64 // of the block, for errors
	var err error
	if r.ahead != nil {
		r.cur = r.ahead.next(r.cur)
		if r.cur.readErr != nil {
			r.err = r.cur.readErr
			return false
		}
		r.block, off, err = r.cur.edges, r.cur.off, r.cur.err
	} else {
		if err := r.blocks.next(0); err != nil {
			r.err = err
			return false
		}
		off = r.blocks.off
		r.block, err = r.dec.decode(r.blocks.data, r.blocks.count, r.block)
	}
	if err == nil && started && CompareEdges(r.block[0], last) < 0 {
		err = fmt.Errorf("%w: block starts with edge %v %v after %v %v", ErrCorrupt, r.block[0].Pos, r.block[0].Ref, last.Pos, last.Ref)
	}
	if err != nil {
		r.failAt(err, off)
		r.block = r.block[:0]
		return false
	}
	r.n += int64(len(r.block))
	return true
}

// edgeDecoder decodes edge blocks, one at a time.
type edgeDecoder struct {
	bits bitReader
	pos  posDecoder
	ref  refDecoder
}

// decode decodes the count edges of an edge block's payload into
// out[:0], checking that they fill the payload exactly.
func (d *edgeDecoder) decode(payload []byte, count int, out []Edge) ([]Edge, error) {
	b := &d.bits
	b.init(payload)
	d.pos.params(b)
	if err := d.ref.params(b); err != nil {
		return out[:0], err
	}
	return d.pos.decodeEdges(b, count, out, &d.ref)
}

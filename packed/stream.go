package packed

import (
	"fmt"
	"io"
)

// Options configures a writer.
type Options struct {
	// BlockEntries is the most entries a block holds; 0 means the kind's
	// default (see DefaultEdgeBlock and the others), chosen so that blocks
	// come to 16-64 KiB on real data. Smaller blocks make ranged reads of
	// one entry cheaper and blobs a little larger.
	BlockEntries int
}

// withDefault validates o and fills in the default block size.
func (o Options) withDefault(def int) (Options, error) {
	if o.BlockEntries < 0 || o.BlockEntries > maxCount {
		return o, fmt.Errorf("packed: BlockEntries %d is outside 0 to %d", o.BlockEntries, maxCount)
	}
	if o.BlockEntries == 0 {
		o.BlockEntries = def
	}
	return o, nil
}

// stream is the part of every reader that walks blocks: it loads the next
// block when the current one is used up and checks, after each entry, that
// the entry did not read past its block and that a block's last entry
// used the payload exactly.
type stream struct {
	blocks blockReader
	bits   bitReader
	left   int  // entries left in the current block
	first  bool // the next entry is its block's first, stored in full
	n      int64
	err    error // sticky; io.EOF at a clean end
}

func newStream(r io.Reader, kind byte) stream {
	return stream{blocks: blockReader{r: r, kind: kind}}
}

// ready makes an entry available to decode, loading a block and reading
// its parameters with params if needed.
func (s *stream) ready(params func(*bitReader) error) bool {
	if s.err != nil {
		return false
	}
	if s.left > 0 {
		return true
	}
	if err := s.blocks.next(0); err != nil {
		s.err = err
		return false
	}
	s.bits.init(s.blocks.data)
	s.left, s.first = s.blocks.count, true
	if err := params(&s.bits); err != nil {
		s.fail(err)
		return false
	}
	return true
}

// done accounts for one decoded entry and reports whether it is good.
func (s *stream) done() bool {
	if s.bits.overrun() {
		s.fail(fmt.Errorf("%w: entry runs past its block", ErrCorrupt))
		return false
	}
	s.left--
	s.first = false
	s.n++
	if s.left == 0 && !s.bits.exhausted() {
		s.fail(fmt.Errorf("%w: block has bytes after its last entry", ErrCorrupt))
		return false
	}
	return true
}

// fail records err, which happened decoding entry s.n.
func (s *stream) fail(err error) { s.failAt(err, s.blocks.off) }

// failAt is fail for a block whose reading left the offset at off.
func (s *stream) failAt(err error, off int64) {
	s.err = fmt.Errorf("packed: %s entry %d (block at offset %d): %w", kindNames[s.blocks.kind], s.n, off, err)
}

// Err returns the error that ended reading, or nil at a clean end.
func (s *stream) Err() error {
	if s.err == io.EOF {
		return nil
	}
	return s.err
}

// Count returns the number of entries read so far.
func (s *stream) Count() int64 { return s.n }

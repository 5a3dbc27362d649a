package packed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// Errors reported for bad input. They are wrapped with context; test with
// errors.Is.
var (
	// ErrCorrupt reports bytes that are not a well formed blob: a bad
	// magic, a checksum mismatch, a truncated block (which also wraps
	// io.ErrUnexpectedEOF), a block of the wrong kind, or entries out of
	// order or out of range.
	ErrCorrupt = errors.New("packed: corrupt data")
	// ErrVersion reports a block or footer of a format version this code
	// does not know; it also wraps ErrCorrupt for callers that do not care.
	ErrVersion = fmt.Errorf("%w: unknown format version", ErrCorrupt)
	// ErrOrder reports a writer given entries out of order: the delta
	// coding needs sorted input, so a caller's bug is refused, not stored.
	ErrOrder = errors.New("packed: entries out of order")
)

// Block framing. Every blob is a sequence of blocks, each
//
//	magic "RP" | version | kind | count uint32 | payload length uint32 | payload | CRC-32C
//
// with the integers little-endian and the CRC-32C (Castagnoli) taken over
// header and payload. A block holds count entries of one kind, the first
// stored in full, so that reading may start at any block boundary.
const (
	magic0, magic1 = 'R', 'P'
	version        = 2
	headerLen      = 12
	crcLen         = 4
	// maxCount and maxPayload bound a block, so that a corrupt header
	// cannot make a reader allocate or loop without end.
	maxCount   = 1 << 20
	maxPayload = 1 << 24
)

// Block kinds.
const (
	kindEdges   = 1
	kindKeys    = 2
	kindIndex   = 3
	kindSources = 4
	kindResults = 5
)

var kindNames = [...]string{kindEdges: "edges", kindKeys: "keys", kindIndex: "key index", kindSources: "sources", kindResults: "results"}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blockWriter frames payloads into blocks on an io.Writer and counts the
// bytes written, so that callers can record offsets.
type blockWriter struct {
	w     io.Writer
	kind  byte
	off   int64
	frame []byte
	err   error // sticky: a writer that failed once writes nothing more
}

// write writes one block of count entries.
func (b *blockWriter) write(count int, payload []byte) error {
	if b.err != nil {
		return b.err
	}
	if count > maxCount || len(payload) > maxPayload {
		// Writers cut blocks well below these; this is a bug, not input.
		panic(fmt.Sprintf("packed: block of %d entries, %d bytes", count, len(payload)))
	}
	f := append(b.frame[:0], magic0, magic1, version, b.kind)
	f = binary.LittleEndian.AppendUint32(f, uint32(count))
	f = binary.LittleEndian.AppendUint32(f, uint32(len(payload)))
	f = append(f, payload...)
	f = binary.LittleEndian.AppendUint32(f, crc32.Checksum(f, castagnoli))
	b.frame = f
	n, err := b.w.Write(f)
	b.off += int64(n)
	if err != nil {
		b.err = fmt.Errorf("packed: writing %s block at offset %d: %w", kindNames[b.kind], b.off-int64(n), err)
	}
	return b.err
}

// blockReader reads blocks of one kind from an io.Reader.
type blockReader struct {
	r     io.Reader
	kind  byte
	off   int64 // offset of the next block in what r yields
	buf   []byte
	count int    // entries in the current block
	data  []byte // the current block's payload
	head  [headerLen]byte
	// stopped is set when a block of the stop kind ended the stream;
	// count is then that block's count.
	stopped bool
	blocks  int // blocks read, not counting a stop block
}

// next reads the next block; io.EOF means a clean end at a block
// boundary. With stop set, a block of that kind also ends the stream: a
// key blob's index block follows its key blocks.
func (b *blockReader) next(stop byte) error {
	h := &b.head // a field, as a local would escape to the heap through r
	n, err := io.ReadFull(b.r, h[:])
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return b.readErr(err, "block header")
	}
	count, size, err := checkHeader(h[:], b.kind, stop)
	if err != nil {
		return fmt.Errorf("packed: %s block at offset %d: %w", kindNames[b.kind], b.off, err)
	}
	if h[3] == stop {
		b.stopped, b.count = true, count
		return io.EOF
	}
	buf, err := readAppend(b.r, append(b.buf[:0], h[:]...), size+crcLen)
	// The capacity beyond the checksum is the bit reader's padding.
	buf = slices.Grow(buf, padding)
	b.buf = buf
	if err != nil {
		return b.readErr(err, "block payload")
	}
	if err := checkCRC(buf); err != nil {
		return fmt.Errorf("packed: %s block at offset %d: %w", kindNames[b.kind], b.off, err)
	}
	b.off += int64(n + size + crcLen)
	b.count, b.data = count, buf[headerLen:headerLen+size]
	b.blocks++
	return nil
}

func (b *blockReader) readErr(err error, what string) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return fmt.Errorf("%w: %s block at offset %d: truncated %s: %w", ErrCorrupt, kindNames[b.kind], b.off, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("packed: reading %s block at offset %d: %w", kindNames[b.kind], b.off, err)
}

// readAppend appends n bytes from r to buf. It grows buf no faster than
// bytes arrive, so that a corrupt length in a short input cannot make it
// allocate much more than the input holds.
func readAppend(r io.Reader, buf []byte, n int) ([]byte, error) {
	want := len(buf) + n
	for len(buf) < want {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(want-len(buf), max(len(buf), 4096)))
		}
		m, err := io.ReadFull(r, buf[len(buf):min(cap(buf), want)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// checkHeader validates a block header of the wanted kind (or of kind
// stop, when stop is not 0) and returns its entry count and payload size.
func checkHeader(h []byte, kind, stop byte) (count, size int, err error) {
	if h[0] != magic0 || h[1] != magic1 {
		return 0, 0, fmt.Errorf("%w: bad magic %x", ErrCorrupt, h[:2])
	}
	if h[2] != version {
		return 0, 0, fmt.Errorf("%w %d", ErrVersion, h[2])
	}
	if h[3] != kind && (stop == 0 || h[3] != stop) {
		return 0, 0, fmt.Errorf("%w: block of kind %d, want %d", ErrCorrupt, h[3], kind)
	}
	c, s := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	// Only a key index may be empty: that of a blob without positions.
	if c == 0 && h[3] != kindIndex || c > maxCount || s > maxPayload {
		return 0, 0, fmt.Errorf("%w: block of %d entries and %d bytes", ErrCorrupt, c, s)
	}
	return int(c), int(s), nil
}

// checkCRC verifies a whole block: header, payload, checksum.
func checkCRC(block []byte) error {
	body := block[:len(block)-crcLen]
	want := binary.LittleEndian.Uint32(block[len(body):])
	if got := crc32.Checksum(body, castagnoli); got != want {
		return fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	return nil
}

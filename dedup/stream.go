package dedup

import (
	"fmt"
	"io"
)

// bufferSize is the Reader and Writer buffer: large enough that blob reads
// and writes go out in few requests. It need not be a multiple of EntryLen:
// the Reader carries a partial record over to the next refill.
const bufferSize = 256 << 10

// maxEmptyReads bounds how often a Reader accepts (0, nil) from its source
// before giving up, as bufio does, so a broken source cannot spin forever.
const maxEmptyReads = 100

// Reader reads a run: a stream of EntryLen-byte records, as written to
// blobs by Writer. It does not check order; Merge does.
type Reader struct {
	src    io.Reader
	buf    []byte
	pos    int   // next undecoded byte in buf
	end    int   // end of valid bytes in buf
	n      int64 // records decoded so far
	srcErr error // the source's error, held back until buf is drained
	err    error // sticky: reported by Err; io.EOF at a clean end
}

// NewReaderSize returns a Reader of r whose buffer holds size bytes,
// clamped to between one record and 256 KiB (0 or less: 256 KiB). Give it
// the run's length when it is known: a merge of many short runs would
// otherwise allocate and clear far more buffer than it reads.
func NewReaderSize(r io.Reader, size int64) *Reader {
	if size <= 0 {
		size = bufferSize
	}
	size = min(max(size, EntryLen), bufferSize)
	return &Reader{src: r, buf: make([]byte, size)}
}

// Next returns the next entry. It returns false at the end of the run or on
// the first error; Err tells which.
func (r *Reader) Next() (Entry, bool) {
	if r.end-r.pos < EntryLen && !r.fill() {
		return Entry{}, false
	}
	e, err := decodeEntry(r.buf[r.pos:])
	if err != nil {
		r.err = fmt.Errorf("dedup: record %d: %w", r.n, err)
		// Leave nothing to decode, so that fill reports the error again.
		r.pos, r.end = 0, 0
		return Entry{}, false
	}
	r.pos += EntryLen
	r.n++
	return e, true
}

// fill makes at least one whole record available in buf, or sets r.err.
func (r *Reader) fill() bool {
	if r.err != nil {
		return false
	}
	r.end = copy(r.buf, r.buf[r.pos:r.end])
	r.pos = 0
	for empty := 0; r.end < EntryLen && r.srcErr == nil; {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.srcErr = err
		} else if n == 0 {
			if empty++; empty >= maxEmptyReads {
				r.srcErr = io.ErrNoProgress
			}
		}
	}
	if r.end >= EntryLen {
		return true
	}
	switch {
	case r.srcErr == io.EOF && r.end == 0:
		r.err = io.EOF
	case r.srcErr == io.EOF:
		// A run is written in one upload, so a partial record means the
		// blob was cut short, not that a writer is still appending.
		r.err = fmt.Errorf("%w: %d bytes after record %d, want %d: %w",
			ErrCorrupt, r.end, r.n, EntryLen, io.ErrUnexpectedEOF)
	default:
		r.err = fmt.Errorf("dedup: reading after record %d: %w", r.n, r.srcErr)
	}
	return false
}

// Err returns the error that ended Next, or nil if the run ended cleanly.
func (r *Reader) Err() error {
	if r.err == io.EOF {
		return nil
	}
	return r.err
}

// Count returns the number of entries Next has returned.
func (r *Reader) Count() int64 { return r.n }

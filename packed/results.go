package packed

import (
	"bytes"
	"fmt"
	"io"
)

// DefaultResultBlock is the default number of result words a block
// holds: a whole final blob of 65536 positions, which costs a few bytes
// when they are all unknown.
const DefaultResultBlock = 65536

// A result block is one of two layouts, whichever is smaller (the first
// bit says which):
//
//	0: every word in 16 bits
//	1: kRun (6 bits), then runs of equal words: the word in 16 bits,
//	   gamma(run length - 1, kRun)
//
// Results of a deep ply are mostly unknown, so runs make them nearly
// free; near the end of the game, words differ and the plain layout caps
// the cost at today's 2 bytes.
const (
	resultsPlain = 0
	resultsRuns  = 1
)

// ResultWriter writes per-position result words, as
// backtrack.AppendResult makes them.
type ResultWriter struct {
	blocks blockWriter
	bits   bitWriter
	opts   Options
	words  []uint16
	runs   []wordRun // of the block being written
}

// wordRun is a run of equal result words.
type wordRun struct {
	word   uint16
	length int
}

// NewResultWriter returns a writer of result blocks to w.
func NewResultWriter(w io.Writer, o Options) (*ResultWriter, error) {
	o, err := o.withDefault(DefaultResultBlock)
	if err != nil {
		return nil, err
	}
	return &ResultWriter{blocks: blockWriter{w: w, kind: kindResults}, opts: o}, nil
}

// Add appends the next position's word.
func (w *ResultWriter) Add(word uint16) error {
	if len(w.words) == w.opts.BlockEntries {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.words = append(w.words, word)
	return nil
}

// Close writes out the words added so far; it does not close the
// underlying writer.
func (w *ResultWriter) Close() error { return w.flush() }

func (w *ResultWriter) flush() error {
	err := w.writeBlock(w.words)
	w.words = w.words[:0]
	return err
}

// writeBlock writes words, at most a block's, as one block.
func (w *ResultWriter) writeBlock(words []uint16) error {
	n := len(words)
	if n == 0 {
		return w.blocks.err
	}
	var h lenHist
	w.runs = appendRuns(w.runs[:0], words)
	for _, r := range w.runs {
		h.add(uint64(r.length - 1))
	}
	k := h.best()
	var runBits uint
	for l, c := range h {
		runBits += uint(c) * (16 + gammaLen(uint(l), k))
	}
	w.bits.reset()
	if runBits+6 < 16*uint(n) {
		w.bits.write(resultsRuns, 1)
		w.bits.write(uint64(k), 6)
		for _, r := range w.runs {
			w.bits.write(uint64(r.word), 16)
			w.bits.gamma(uint64(r.length-1), k)
		}
	} else {
		w.bits.write(resultsPlain, 1)
		for _, v := range words {
			w.bits.write(uint64(v), 16)
		}
	}
	return w.blocks.write(n, w.bits.bytes())
}

// appendRuns appends the runs of equal words of words to runs. Most of
// a deep ply's words are one long run of unknowns, so the scan compares
// four words a step.
func appendRuns(runs []wordRun, words []uint16) []wordRun {
	for i := 0; i < len(words); {
		v := words[i]
		j := i + 1
		for ; j+4 <= len(words); j += 4 {
			if q := words[j : j+4 : j+4]; q[0] != v || q[1] != v || q[2] != v || q[3] != v {
				break
			}
		}
		for j < len(words) && words[j] == v {
			j++
		}
		runs = append(runs, wordRun{v, j - i})
		i = j
	}
	return runs
}

// ResultReader reads result blocks until the end of its input.
type ResultReader struct {
	stream
	runs   bool
	k      uint
	word   uint16
	run    uint64 // words of the current run not returned yet
	params func(*bitReader) error
}

// NewResultReader returns a reader of the result blocks in r.
func NewResultReader(r io.Reader) *ResultReader {
	rr := &ResultReader{stream: newStream(r, kindResults)}
	rr.params = func(b *bitReader) error {
		rr.runs, rr.run = b.read(1) == resultsRuns, 0
		if rr.runs {
			rr.k = uint(b.read(6))
		}
		return nil
	}
	return rr
}

// Next returns the next word. It returns false at the end of the input or
// on the first error; Err tells which.
func (r *ResultReader) Next() (uint16, bool) {
	if !r.ready(r.params) {
		return 0, false
	}
	switch {
	case !r.runs:
		r.word = uint16(r.bits.read(16))
	case r.run == 0:
		r.word = uint16(r.bits.read(16))
		n, ok := r.bits.gamma(r.k)
		if !ok || n >= uint64(r.left) {
			r.fail(fmt.Errorf("%w: run of results longer than its block", ErrCorrupt))
			return 0, false
		}
		r.run = n
	default:
		r.run--
	}
	if !r.done() {
		return 0, false
	}
	return r.word, true
}

// EncodeResults returns words as result blocks.
func EncodeResults(words []uint16) []byte {
	var buf bytes.Buffer
	w, _ := NewResultWriter(&buf, Options{})
	// The blocks straight from words, which Add would copy a block at a
	// time into a buffer of the writer's own. A bytes.Buffer does not fail.
	for len(words) > 0 {
		n := min(len(words), w.opts.BlockEntries)
		_ = w.writeBlock(words[:n])
		words = words[n:]
	}
	return buf.Bytes()
}

// DecodeResults appends the words of the result blocks b to dst.
func DecodeResults(dst []uint16, b []byte) ([]uint16, error) {
	r := NewResultReader(bytes.NewReader(b))
	for {
		v, ok := r.Next()
		if !ok {
			return dst, r.Err()
		}
		dst = append(dst, v)
	}
}

package dedup

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"
)

func readAll(r *Reader) []Entry {
	var out []Entry
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		out = append(out, e)
	}
	return out
}

func TestReaderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 2, bufferSize/EntryLen - 1, bufferSize / EntryLen, bufferSize/EntryLen + 1, 30000} {
		es := randEntries(rng, n, 0)
		buf := bytes.NewBuffer(encode(es))
		// Sources that return one byte at a time, or data with io.EOF,
		// must read the same.
		sources := func() map[string]io.Reader {
			return map[string]io.Reader{
				"plain":    bytes.NewReader(buf.Bytes()),
				"one byte": iotest.OneByteReader(bytes.NewReader(buf.Bytes())),
				"data+EOF": iotest.DataErrReader(bytes.NewReader(buf.Bytes())),
				"half":     iotest.HalfReader(bytes.NewReader(buf.Bytes())),
			}
		}
		// So must Readers of any buffer size, down to one record.
		for _, size := range []int64{0, 1, EntryLen, EntryLen + 1, 3*EntryLen - 1, int64(buf.Len())} {
			for name, src := range sources() {
				r := NewReaderSize(src, size)
				got := readAll(r)
				if err := r.Err(); err != nil {
					t.Fatalf("n=%d %s size %d: Err = %v", n, name, size, err)
				}
				if !slices.Equal(got, es) || r.Count() != int64(n) {
					t.Fatalf("n=%d %s size %d: read %d entries, want %d", n, name, size, len(got), n)
				}
				if _, ok := r.Next(); ok {
					t.Fatalf("n=%d %s size %d: Next after the end returned an entry", n, name, size)
				}
			}
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	es := randEntries(rng, 10, 0)
	good := encode(es)
	bad := bytes.Clone(good)
	bad[3*EntryLen] = 7 // side byte of record 3
	boom := errors.New("boom")
	tests := []struct {
		name  string
		src   io.Reader
		valid int // entries before the error
		is    []error
	}{
		{"truncated record", bytes.NewReader(good[:len(good)-1]), 9, []error{io.ErrUnexpectedEOF, ErrCorrupt}},
		{"single partial record", bytes.NewReader(good[:5]), 0, []error{io.ErrUnexpectedEOF}},
		{"corrupt record", bytes.NewReader(bad), 3, []error{ErrCorrupt}},
		{"source error", io.MultiReader(bytes.NewReader(good[:4*EntryLen+2]), iotest.ErrReader(boom)), 4, []error{boom}},
		{"timeout after data", iotest.TimeoutReader(bytes.NewReader(good)), 10, []error{iotest.ErrTimeout}},
		{"no progress", zeroReader{}, 0, []error{io.ErrNoProgress}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(tt.src)
			got := readAll(r)
			if !slices.Equal(got, es[:tt.valid]) {
				t.Errorf("read %d entries before the error, want %d", len(got), tt.valid)
			}
			err := r.Err()
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("Err = %v, want %v", err, target)
				}
			}
			if _, ok := r.Next(); ok || r.Err() != err {
				t.Errorf("error is not sticky")
			}
		})
	}
}

type failWriter struct {
	n   int // bytes accepted before failing
	err error
}

func (f *failWriter) Write(b []byte) (int, error) {
	if len(b) <= f.n {
		f.n -= len(b)
		return len(b), nil
	}
	n := f.n
	f.n = 0
	return n, f.err
}

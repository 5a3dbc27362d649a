package packed

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
)

// The benchmarks report entries per second (entries/s) and, through
// SetBytes, MB/s of encoded bytes: the rate to compare with a disk or a
// network link carrying the same blob. On a machine shared with other
// work, wall-clock rates understate the code; entries/cpu-s divides by
// the CPU time the process was given instead. Each has a serial variant,
// one goroutine on one blob, and a parallel one, a blob per goroutine on
// every core (b.RunParallel) as a merge's many readers or a worker's
// concurrent tasks use them; edge decoding also has ahead, one blob read
// ahead on every core (NewEdgeReaderAhead).

// rate reports entries/s and entries/cpu-s for n entries per op; start
// is cputime.Process() taken before the loop.
func rate(b *testing.B, n int, start time.Duration) {
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(n*b.N)/(cputime.Process()-start).Seconds(), "entries/cpu-s")
}

// benchEncode measures writing items with writers made by newWriter.
func benchEncode[T any, W writer[T]](b *testing.B, newWriter func(io.Writer, Options) (W, error), items []T) {
	size := int64(len(encode(b, newWriter, items, Options{})))
	write := func(buf *bytes.Buffer) {
		buf.Reset()
		w, _ := newWriter(buf, Options{})
		for _, it := range items {
			_ = w.Add(it)
		}
		_ = w.Close()
	}
	benchBoth(b, size, len(items), func() func() {
		var buf bytes.Buffer
		return func() { write(&buf) }
	})
}

// benchDecode measures reading the n entries of data with read.
func benchDecode(b *testing.B, data []byte, n int, read func(io.Reader) error) {
	benchBoth(b, int64(len(data)), n, func() func() {
		return func() {
			if err := read(bytes.NewReader(data)); err != nil {
				b.Error(err)
			}
		}
	})
}

// benchBoth runs the serial and parallel variants of a benchmark whose
// op, made by newOp for each goroutine, handles n entries in size bytes.
func benchBoth(b *testing.B, size int64, n int, newOp func() func()) {
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(size)
		op := newOp()
		start := cputime.Process()
		for b.Loop() {
			op()
		}
		rate(b, n, start)
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(size)
		start := cputime.Process()
		b.RunParallel(func(pb *testing.PB) {
			op := newOp()
			for pb.Next() {
				op()
			}
		})
		rate(b, n, start)
	})
}

// reader is what the readers of single values offer.
type reader[T any] interface {
	Next() (T, bool)
	Err() error
}

// drain reads r to its end.
func drain[T any, R reader[T]](r R) error {
	for {
		if _, ok := r.Next(); !ok {
			return r.Err()
		}
	}
}

// sink keeps the benchmarks' reads from being optimised away.
var sink uint64

// drainEdges reads r to its end as a merge does, through the concrete
// type, where Next inlines, and uses every edge.
func drainEdges(r *EdgeReader) error {
	var sum uint64
	for {
		e, ok := r.Next()
		if !ok {
			sink += sum
			return r.Err()
		}
		sum += e.Pos.Occ ^ e.Pos.White ^ uint64(e.Ref.Index)
	}
}

// drainKeys is drainEdges for a KeyReader.
func drainKeys(r *KeyReader) error {
	var sum uint64
	for {
		p, ok := r.Next()
		if !ok {
			sink += sum
			return r.Err()
		}
		sum += p.Occ ^ p.White
	}
}

func BenchmarkEdgeEncode(b *testing.B) { benchEncode(b, NewEdgeWriter, expansion(b, 8, 0)) }

func BenchmarkEdgeDecode(b *testing.B) {
	es := expansion(b, 8, 0)
	data := encodeEdges(b, es, Options{})
	benchDecode(b, data, len(es), func(r io.Reader) error {
		return drainEdges(NewEdgeReader(r))
	})
	benchOne(b, "ahead", int64(len(data)), len(es), func() error {
		r := NewEdgeReaderAhead(bytes.NewReader(data), runtime.GOMAXPROCS(0))
		defer r.Close()
		return drainEdges(r)
	})
}

// benchOne runs a serial benchmark named name whose op handles n entries
// in size bytes.
func benchOne(b *testing.B, name string, size int64, n int, op func() error) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(size)
		start := cputime.Process()
		for b.Loop() {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
		rate(b, n, start)
	})
}

func BenchmarkKeyEncode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	benchEncode(b, NewKeyWriter, ps)
	// AddKeys, 1,024 keys a call, as a merge's output gives them.
	var buf bytes.Buffer
	benchOne(b, "batch", int64(len(encodeKeys(b, ps, Options{}))), len(ps), func() error {
		buf.Reset()
		w, err := NewKeyWriter(&buf, Options{})
		if err != nil {
			return err
		}
		for i := 0; i < len(ps); i += 1024 {
			if err := w.AddKeys(ps[i:min(len(ps), i+1024)]); err != nil {
				return err
			}
		}
		return w.Close()
	})
}

func BenchmarkKeyDecode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	data := encodeKeys(b, ps, Options{})
	benchDecode(b, data, len(ps), func(r io.Reader) error {
		return drainKeys(NewKeyReader(r))
	})
	// DecodeKeys, as a task reads a final blob: the whole blob into a
	// slice.
	benchOne(b, "blob", int64(len(data)), len(ps), func() error {
		_, err := DecodeKeys(data)
		return err
	})
}

func BenchmarkSourceEncode(b *testing.B) {
	benchEncode(b, NewSourceWriter, sourcesOf(allEdges(b, 8))[:blobPositions])
}

func BenchmarkSourceDecode(b *testing.B) {
	lists := sourcesOf(allEdges(b, 8))[:blobPositions]
	benchDecode(b, encodeSources(b, lists, Options{}), len(lists), func(r io.Reader) error {
		sr := NewSourceReader(r)
		var buf []Ref
		for ok := true; ok; {
			buf, ok = sr.Next(buf)
		}
		return sr.Err()
	})
}

// BenchmarkSourceSkip reads the sources of one position in 12,500 of a
// blob, as a resolution does for its few known results (sendNotices; at
// 8x8 ply 13 of a run to 14, about one in 12,500), with blocks of
// several sizes: a skip decodes the part of the block before the
// position it wants.
func BenchmarkSourceSkip(b *testing.B) {
	lists := sourcesOf(allEdges(b, 8))[:blobPositions]
	for _, block := range []int{8192, 4096, 2048, 1024} {
		data := encodeSources(b, lists, Options{BlockEntries: block})
		b.Run(fmt.Sprintf("block-%d", block), func(b *testing.B) {
			var buf []Ref
			for b.Loop() {
				sr := NewSourceReader(bytes.NewReader(data))
				at := int64(0)
				for next := int64(6000); next < int64(len(lists)); next += 12500 {
					var ok bool
					if buf, ok = sr.Skip(next-at, buf); !ok {
						b.Fatal(sr.Err())
					}
					if buf, ok = sr.Next(buf); !ok {
						b.Fatal(sr.Err())
					}
					at = next + 1
				}
			}
			b.ReportMetric(float64(len(data))/float64(len(lists)), "bytes/position")
		})
	}
}

// resultWords is a final blob's results at a ply where a few positions
// are decided: mostly unknown, with short stretches of known results.
func resultWords() []uint16 {
	words := make([]uint16, blobPositions)
	for i := 0; i < len(words); i += 997 {
		words[i] = uint16(i%3 + 1)
	}
	return words
}

func BenchmarkResultEncode(b *testing.B) { benchEncode(b, NewResultWriter, resultWords()) }

func BenchmarkResultDecode(b *testing.B) {
	words := resultWords()
	benchDecode(b, EncodeResults(words), len(words), func(r io.Reader) error {
		return drain(NewResultReader(r))
	})
}

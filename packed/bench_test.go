package packed

import (
	"bytes"
	"io"
	"syscall"
	"testing"
	"time"
)

// The benchmarks report entries per second (entries/s) and, through
// SetBytes, MB/s of encoded bytes: the rate to compare with a disk or a
// network link carrying the same blob. On a machine shared with other
// work, wall-clock rates understate the code; entries/cpu-s divides by
// the CPU time the process was given instead.

// rate reports entries/s and entries/cpu-s for n entries per op; start
// is cpuTime() taken before the loop.
func rate(b *testing.B, n int, start time.Duration) {
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(n*b.N)/(cpuTime()-start).Seconds(), "entries/cpu-s")
}

// cpuTime returns the user and system CPU time of the process.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// benchEncode measures writing items with writers made by newWriter.
func benchEncode[T any, W writer[T]](b *testing.B, newWriter func(io.Writer, Options) (W, error), items []T) {
	b.SetBytes(int64(len(encode(b, newWriter, items, Options{}))))
	var buf bytes.Buffer
	start := cpuTime()
	for b.Loop() {
		buf.Reset()
		w, _ := newWriter(&buf, Options{})
		for _, it := range items {
			_ = w.Add(it)
		}
		_ = w.Close()
	}
	rate(b, len(items), start)
}

// benchDecode measures reading the n entries of data with read.
func benchDecode(b *testing.B, data []byte, n int, read func(io.Reader) error) {
	b.SetBytes(int64(len(data)))
	start := cpuTime()
	for b.Loop() {
		if err := read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, n, start)
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

func BenchmarkEdgeEncode(b *testing.B) { benchEncode(b, NewEdgeWriter, expansion(b, 8, 0)) }

func BenchmarkEdgeDecode(b *testing.B) {
	es := expansion(b, 8, 0)
	benchDecode(b, encodeEdges(b, es, Options{}), len(es), func(r io.Reader) error {
		return drain(NewEdgeReader(r))
	})
}

func BenchmarkKeyEncode(b *testing.B) {
	benchEncode(b, NewKeyWriter, plyPositions(b, 9)[:blobPositions])
}

func BenchmarkKeyDecode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	benchDecode(b, encodeKeys(b, ps, Options{}), len(ps), func(r io.Reader) error {
		return drain(NewKeyReader(r))
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

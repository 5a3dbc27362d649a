package packed

import (
	"bytes"
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

func BenchmarkEdgeEncode(b *testing.B) {
	es := expansion(b, 8, 0)
	b.SetBytes(int64(len(encodeEdges(b, es, Options{}))))
	var buf bytes.Buffer
	start := cpuTime()
	for b.Loop() {
		buf.Reset()
		w, _ := NewEdgeWriter(&buf, Options{})
		for _, e := range es {
			_ = w.Add(e)
		}
		_ = w.Close()
	}
	rate(b, len(es), start)
}

func BenchmarkEdgeDecode(b *testing.B) {
	es := expansion(b, 8, 0)
	data := encodeEdges(b, es, Options{})
	b.SetBytes(int64(len(data)))
	start := cpuTime()
	for b.Loop() {
		r := NewEdgeReader(bytes.NewReader(data))
		for {
			if _, ok := r.Next(); !ok {
				break
			}
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	rate(b, len(es), start)
}

func BenchmarkKeyEncode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	b.SetBytes(int64(len(encodeKeys(b, ps, Options{}))))
	var buf bytes.Buffer
	start := cpuTime()
	for b.Loop() {
		buf.Reset()
		w, _ := NewKeyWriter(&buf, Options{})
		for _, p := range ps {
			_ = w.Add(p)
		}
		_ = w.Close()
	}
	rate(b, len(ps), start)
}

func BenchmarkKeyDecode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	data := encodeKeys(b, ps, Options{})
	b.SetBytes(int64(len(data)))
	start := cpuTime()
	for b.Loop() {
		r := NewKeyReader(bytes.NewReader(data))
		for {
			if _, ok := r.Next(); !ok {
				break
			}
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	rate(b, len(ps), start)
}

func BenchmarkSourceEncode(b *testing.B) {
	lists := sourcesOf(allEdges(b, 8))[:blobPositions]
	b.SetBytes(int64(len(encodeSources(b, lists, Options{}))))
	var buf bytes.Buffer
	start := cpuTime()
	for b.Loop() {
		buf.Reset()
		w, _ := NewSourceWriter(&buf, Options{})
		for _, l := range lists {
			_ = w.Add(l)
		}
		_ = w.Close()
	}
	rate(b, len(lists), start)
}

func BenchmarkSourceDecode(b *testing.B) {
	lists := sourcesOf(allEdges(b, 8))[:blobPositions]
	data := encodeSources(b, lists, Options{})
	b.SetBytes(int64(len(data)))
	start := cpuTime()
	for b.Loop() {
		r := NewSourceReader(bytes.NewReader(data))
		var buf []Ref
		for {
			var ok bool
			if buf, ok = r.Next(buf); !ok {
				break
			}
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	rate(b, len(lists), start)
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

func BenchmarkResultEncode(b *testing.B) {
	words := resultWords()
	b.SetBytes(int64(len(EncodeResults(words))))
	start := cpuTime()
	for b.Loop() {
		EncodeResults(words)
	}
	rate(b, len(words), start)
}

func BenchmarkResultDecode(b *testing.B) {
	words := resultWords()
	data := EncodeResults(words)
	b.SetBytes(int64(len(data)))
	dst := make([]uint16, 0, len(words))
	start := cpuTime()
	for b.Loop() {
		if _, err := DecodeResults(dst[:0], data); err != nil {
			b.Fatal(err)
		}
	}
	rate(b, len(words), start)
}

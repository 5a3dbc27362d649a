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

package packed

import (
	"bytes"
	"testing"
)

// The benchmarks report entries per second (entries/s) and, through
// SetBytes, MB/s of encoded bytes: the rate to compare with a disk or a
// network link carrying the same blob.

func BenchmarkEdgeEncode(b *testing.B) {
	es := expansion(b, 8, 0)
	b.SetBytes(int64(len(encodeEdges(b, es, Options{}))))
	var buf bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		w, _ := NewEdgeWriter(&buf, Options{})
		for _, e := range es {
			_ = w.Add(e)
		}
		_ = w.Close()
	}
	b.ReportMetric(float64(len(es)*b.N)/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkEdgeDecode(b *testing.B) {
	es := expansion(b, 8, 0)
	data := encodeEdges(b, es, Options{})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
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
	b.ReportMetric(float64(len(es)*b.N)/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkKeyEncode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	b.SetBytes(int64(len(encodeKeys(b, ps, Options{}))))
	var buf bytes.Buffer
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		w, _ := NewKeyWriter(&buf, Options{})
		for _, p := range ps {
			_ = w.Add(p)
		}
		_ = w.Close()
	}
	b.ReportMetric(float64(len(ps)*b.N)/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkKeyDecode(b *testing.B) {
	ps := plyPositions(b, 9)[:blobPositions]
	data := encodeKeys(b, ps, Options{})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
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
	b.ReportMetric(float64(len(ps)*b.N)/b.Elapsed().Seconds(), "entries/s")
}

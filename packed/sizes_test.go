package packed

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

// sizes is what one ply of 8x8 costs, in bytes, stored the way the
// pipeline stores it: expansion runs of one parent final blob each, cut
// into bucket segments; final blobs of blobPositions positions, each with
// its key blob, source blob and (all unknown) result blob.
type sizes struct {
	positions, edges                  int
	expansion, keys, sources, results int
	uvarintSources                    int // today's backtrack.AppendSources
}

// buckets is how many segments an expansion run is cut into.
const buckets = 64

func measure(t testing.TB, parentPly int) sizes {
	var s sizes
	parents := plyPositions(t, parentPly)
	var all []Edge
	for blob := 0; blob*blobPositions < len(parents); blob++ {
		es := expansion(t, parentPly, blob)
		all = append(all, es...)
		// Segments cut at even shares of the run stand in for buckets.
		var buf countWriter
		w, _ := NewEdgeWriter(&buf, Options{})
		for i, e := range es {
			if i > 0 && i*buckets/len(es) != (i-1)*buckets/len(es) {
				_, _ = w.EndSegment()
			}
			_ = w.Add(e)
		}
		_ = w.Close()
		s.expansion += buf.n
	}
	slices.SortFunc(all, CompareEdges)
	s.edges = len(all)
	lists, positions := sourcesOf(all), distinct(all)
	s.positions = len(lists)
	for lo := 0; lo < len(lists); lo += blobPositions {
		hi := min(lo+blobPositions, len(lists))
		var keys []uint16
		var kw, sw countWriter
		k, _ := NewKeyWriter(&kw, Options{})
		src, _ := NewSourceWriter(&sw, Options{})
		for i := lo; i < hi; i++ {
			_ = src.Add(lists[i])
			s.uvarintSources += uvarintLen(uint64(len(lists[i])))
			for _, r := range lists[i] {
				s.uvarintSources += uvarintLen(uint64(r.Blob)) + uvarintLen(uint64(r.Index))
			}
		}
		for _, p := range positions[lo:hi] {
			_ = k.Add(p)
		}
		_, _ = k.Close(), src.Close()
		s.keys += kw.n
		s.sources += sw.n
		keys = make([]uint16, hi-lo)
		s.results += len(EncodeResults(keys))
	}
	return s
}

func uvarintLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func (s sizes) String() string {
	per := func(n, d int) string { return fmt.Sprintf("%.3f", float64(n)/float64(d)) }
	return fmt.Sprintf("%d positions, %d edges: expansion runs %s B/edge (raw 25); keys %s B/position (raw 17); sources %s B/position (uvarint %s); results %s B/position (raw 2); final total %s B/position",
		s.positions, s.edges, per(s.expansion, s.edges), per(s.keys, s.positions),
		per(s.sources, s.positions), per(s.uvarintSources, s.positions), per(s.results, s.positions),
		per(s.keys+s.sources+s.results, s.positions))
}

// TestSizes logs what plies 8 to 10 cost and holds ply 9 to the sizes
// of format version 2, measured on 2026-11-25: the encodings are
// deterministic, so a larger blob means the format got worse. (Version
// 1 was smaller, 3.63 bytes an edge and 1.72 a key, and decoded at a
// third of the speed; doc.go.)
func TestSizes(t *testing.T) {
	for parent := 7; parent <= 9; parent++ {
		if parent == 9 && testing.Short() {
			continue
		}
		s := measure(t, parent)
		t.Logf("ply %d: %v", parent+1, s)
		if parent == 8 {
			ceilings := []struct {
				what      string
				got, most float64
			}{
				{"expansion bytes per edge", float64(s.expansion) / float64(s.edges), 4.03},
				{"key bytes per position", float64(s.keys) / float64(s.positions), 2.35},
				{"source bytes per position", float64(s.sources) / float64(s.positions), 2.56},
				{"result bytes per position", float64(s.results) / float64(s.positions), 0.001},
			}
			for _, c := range ceilings {
				if c.got > c.most {
					t.Errorf("ply 9: %s %.3f, want at most %.3f", c.what, c.got, c.most)
				}
			}
		}
	}
}

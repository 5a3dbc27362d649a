package packed

import (
	"bytes"
	"fmt"
	"testing"
)

// TestSegments cuts an expansion run into segments as expand cuts it
// into buckets, and reads each segment alone from its (Off, Len).
func TestSegments(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		es := expansion(t, 7, 0)
		cuts := []int{0, 1, 1, 1000, 1001, 20000, len(es) - 1, len(es)} // one empty segment
		var buf bytes.Buffer
		w, err := NewEdgeWriter(&buf, Options{BlockEntries: 700})
		if err != nil {
			t.Fatal(err)
		}
		type seg struct{ off, end int64 }
		var segs []seg
		var off int64
		for s := 0; s+1 < len(cuts); s++ {
			for _, e := range es[cuts[s]:cuts[s+1]] {
				if err := w.Add(e); err != nil {
					t.Fatal(err)
				}
			}
			end, err := w.EndSegment()
			if err != nil {
				t.Fatal(err)
			}
			segs = append(segs, seg{off, end})
			off = end
		}
		if off != int64(buf.Len()) {
			t.Fatalf("last segment ends at %d, blob has %d bytes", off, buf.Len())
		}
		for s, sg := range segs {
			got, err := decodeEdges(buf.Bytes()[sg.off:sg.end])
			if err != nil {
				t.Fatalf("segment %d: %v", s, err)
			}
			checkDecoded(t, fmt.Sprintf("edges of segment %d", s), got, es[cuts[s]:cuts[s+1]])
		}
	})
}

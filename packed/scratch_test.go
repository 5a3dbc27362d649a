package packed

import (
	"bytes"
	"testing"
)

// TestWritersReuseScratch writes blobs one after another and two at once,
// so that writers take scratch that others have grown and left holding
// their data: every blob must come out as it did the first time.
func TestWritersReuseScratch(t *testing.T) {
	small, large := expansion(t, 5, 0), expansion(t, 8, 0)
	keys := plyPositions(t, 6)
	want := map[string][]byte{
		"small edges": encodeEdges(t, small, Options{}),
		"large edges": encodeEdges(t, large, Options{BlockEntries: 100}),
		"keys":        encodeKeys(t, keys, Options{BlockEntries: 50}),
	}
	check := func(name string, got []byte) {
		t.Helper()
		if !bytes.Equal(got, want[name]) {
			t.Errorf("%s: %d bytes, unlike the first time (%d)", name, len(got), len(want[name]))
		}
	}
	for range 3 {
		check("large edges", encodeEdges(t, large, Options{BlockEntries: 100}))
		check("keys", encodeKeys(t, keys, Options{BlockEntries: 50}))
		check("small edges", encodeEdges(t, small, Options{}))
	}

	// Two writers open at once, entries added in turn.
	var eb, kb bytes.Buffer
	ew, err := NewEdgeWriter(&eb, Options{BlockEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	kw, err := NewKeyWriter(&kb, Options{BlockEntries: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i := range max(len(large), len(keys)) {
		if i < len(large) {
			if err := ew.Add(large[i]); err != nil {
				t.Fatal(err)
			}
		}
		if i < len(keys) {
			if err := kw.Add(keys[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := ew.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kw.Close(); err != nil {
		t.Fatal(err)
	}
	check("large edges", eb.Bytes())
	check("keys", kb.Bytes())
}

// TestReadersReuseBuffers reads runs with edge readers that take their
// buffers from the pool that closed readers gave back to: with and
// without reading ahead, six open at once and read an edge each in turn,
// half of them closed partway (before their first edge, within a
// block, at a block's end). Each must read its own run exactly; run with
// -race, it also checks that no reader touches memory it gave back.
func TestReadersReuseBuffers(t *testing.T) {
	small, large := expansion(t, 5, 0), expansion(t, 8, 0)
	runs := [][]Edge{small, large}
	data := [][]byte{encodeEdges(t, small, Options{BlockEntries: 10}), encodeEdges(t, large, Options{BlockEntries: 100})}
	for round := range 4 {
		type reading struct {
			r     *EdgeReader
			want  []Edge
			n     int
			stop  int // close after this many edges; -1: read to the end
			ended bool
		}
		var rs []*reading
		for i := range 6 {
			k := (round + i) % 2
			rd := &reading{r: NewEdgeReaderAhead(bytes.NewReader(data[k]), i%3), want: runs[k], stop: -1}
			if i%2 == 0 { // ahead 0, 2 and 1
				rd.stop = []int{0, 7, 10, 100}[round]
			}
			rs = append(rs, rd)
		}
		for left := len(rs); left > 0; {
			for j, rd := range rs {
				if rd.ended {
					continue
				}
				if rd.n == rd.stop {
					rd.r.Close()
					rd.r.Close() // a second Close gives nothing back twice
					rd.ended, left = true, left-1
					continue
				}
				e, ok := rd.r.Next()
				if !ok {
					if rd.n != len(rd.want) || rd.r.Err() != nil {
						t.Fatalf("round %d reader %d: ended after %d of %d edges: %v", round, j, rd.n, len(rd.want), rd.r.Err())
					}
					rd.r.Close()
					rd.ended, left = true, left-1
					continue
				}
				if rd.n >= len(rd.want) || e != rd.want[rd.n] {
					t.Fatalf("round %d reader %d: edge %d is %v, want %v", round, j, rd.n, e, rd.want[min(rd.n, len(rd.want)-1)])
				}
				rd.n++
			}
		}
	}
}

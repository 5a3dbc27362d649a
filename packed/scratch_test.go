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

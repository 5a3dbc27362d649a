package packed

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the blobs in testdata from today's writers")

// TestFormatFixed pins the bytes of version 1: blobs written once and kept
// in testdata must decode to the entries they were written from, and
// today's writers must reproduce them exactly. A durable store keeps blobs
// across upgrades, so a change of the writers that changes their bytes is
// a new format version, never a silent one.
func TestFormatFixed(t *testing.T) {
	small := Options{BlockEntries: 100} // several blocks, of both layouts of a ref
	for _, tc := range []struct {
		file   string
		encode func() []byte
		decode func([]byte) (any, any, error)
	}{
		{"edges-ply6.rp",
			func() []byte { return encodeEdges(t, expansion(t, 5, 0), small) },
			func(b []byte) (any, any, error) {
				got, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
				return got, expansion(t, 5, 0), err
			}},
		{"edges-wide.rp",
			func() []byte { return encodeEdges(t, wideRefEdges(), Options{BlockEntries: 7}) },
			func(b []byte) (any, any, error) {
				got, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
				return got, wideRefEdges(), err
			}},
		{"keys-ply6.rp",
			func() []byte { return encodeKeys(t, plyPositions(t, 6), small) },
			func(b []byte) (any, any, error) {
				got, err := DecodeKeys(b)
				return got, plyPositions(t, 6), err
			}},
		{"sources-ply6.rp",
			func() []byte { return encodeSources(t, sourcesOf(allEdges(t, 5)), small) },
			func(b []byte) (any, any, error) {
				got, err := decodeSources(b)
				return got, sourcesOf(allEdges(t, 5)), err
			}},
		{"results.rp",
			func() []byte { return encode(t, NewResultWriter, resultWords(), Options{BlockEntries: 5000}) },
			func(b []byte) (any, any, error) {
				got, err := DecodeResults(nil, b)
				return got, resultWords(), err
			}},
	} {
		path := filepath.Join("testdata", tc.file)
		enc := tc.encode()
		if *update {
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		kept, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./packed -run TestFormatFixed -update writes it)", err)
		}
		got, want, err := tc.decode(kept)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decodes to other entries than it was written from", tc.file)
		}
		if !bytes.Equal(enc, kept) {
			t.Errorf("%s: today's writer gives %d bytes that differ from the %d kept", tc.file, len(enc), len(kept))
		}
	}
}

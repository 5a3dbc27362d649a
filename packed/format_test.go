package packed

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the blobs in testdata from today's writers")

// TestFormatFixed pins the bytes of version 2: blobs written once and kept
// in testdata must decode to the entries they were written from, and
// today's writers must reproduce them exactly. A durable store keeps blobs
// across upgrades, so a change of the writers that changes their bytes is
// a new format version, never a silent one.
func TestFormatFixed(t *testing.T) {
	small := Options{BlockEntries: 100} // several blocks, of both layouts of a ref
	for _, tc := range []struct {
		file   string
		encode func(t testing.TB) []byte
		decode func(t testing.TB, b []byte) (any, any, error)
	}{
		{"edges-ply6.rp",
			func(t testing.TB) []byte { return encodeEdges(t, expansion(t, 5, 0), small) },
			func(t testing.TB, b []byte) (any, any, error) {
				got, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
				return got, expansion(t, 5, 0), err
			}},
		{"edges-wide.rp",
			func(t testing.TB) []byte { return encodeEdges(t, wideRefEdges(), Options{BlockEntries: 7}) },
			func(t testing.TB, b []byte) (any, any, error) {
				got, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
				return got, wideRefEdges(), err
			}},
		{"keys-ply6.rp",
			func(t testing.TB) []byte { return encodeKeys(t, plyPositions(t, 6), small) },
			func(t testing.TB, b []byte) (any, any, error) {
				got, err := DecodeKeys(b)
				return got, plyPositions(t, 6), err
			}},
		{"sources-ply6.rp",
			func(t testing.TB) []byte { return encodeSources(t, sourcesOf(allEdges(t, 5)), small) },
			func(t testing.TB, b []byte) (any, any, error) {
				got, err := decodeSources(b)
				return got, sourcesOf(allEdges(t, 5)), err
			}},
		{"results.rp",
			func(t testing.TB) []byte {
				return encode(t, NewResultWriter, resultWords(), Options{BlockEntries: 5000})
			},
			func(t testing.TB, b []byte) (any, any, error) {
				got, err := DecodeResults(nil, b)
				return got, resultWords(), err
			}},
	} {
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, tc.encode(t), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		kept, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./packed -run TestFormatFixed -update writes it)", err)
		}
		// The white discs go through PDEP and PEXT or through tables
		// (white.go): both ways must read and write the same bytes.
		t.Run(tc.file, func(t *testing.T) {
			whiteWays(t, func(t *testing.T) {
				got, want, err := tc.decode(t, kept)
				if err != nil {
					t.Errorf("%s: %v", tc.file, err)
				} else if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: decodes to other entries than it was written from", tc.file)
				}
				if enc := tc.encode(t); !bytes.Equal(enc, kept) {
					t.Errorf("%s: today's writer gives %d bytes that differ from the %d kept", tc.file, len(enc), len(kept))
				}
			})
		})
	}
}

// TestOldVersionRefused reads blobs of format version 1, kept from the
// writers of 2026-11-24: a reader of version 2 refuses them with
// ErrVersion rather than misreading them.
func TestOldVersionRefused(t *testing.T) {
	for _, tc := range []struct {
		file string
		read func(b []byte) error
	}{
		{"v1-edges-ply6.rp", func(b []byte) error {
			_, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
			return err
		}},
		{"v1-keys-ply6.rp", func(b []byte) error {
			_, err := DecodeKeys(b)
			return err
		}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.read(b); !errors.Is(err, ErrVersion) {
			t.Errorf("%s: %v, want ErrVersion", tc.file, err)
		}
	}
}

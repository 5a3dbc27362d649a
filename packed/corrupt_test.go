package packed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"
)

// decoders decode a whole blob of each kind, as the fuzz and corruption
// tests feed them.
var decoders = map[string]func([]byte) error{
	"edges": func(b []byte) error { _, err := decodeEdges(b); return err },
	"keys": func(b []byte) error {
		if _, err := DecodeKeys(b); err != nil {
			return err
		}
		_, err := OpenKeyIndex(bytes.NewReader(b), int64(len(b)))
		return err
	},
	"key stream": func(b []byte) error { _, err := DecodeKeys(b); return err },
	"sources":    func(b []byte) error { _, err := decodeSources(b); return err },
	"results":    func(b []byte) error { _, err := DecodeResults(nil, b); return err },
}

// samples returns a small well formed blob of each kind, of several
// blocks.
func samples(t testing.TB) map[string][]byte {
	es := expansion(t, 4, 0)
	return map[string][]byte{
		"edges":      encodeEdges(t, es, Options{BlockEntries: 50}),
		"keys":       encodeKeys(t, plyPositions(t, 5), Options{BlockEntries: 50}),
		"key stream": encodeKeys(t, plyPositions(t, 4), Options{BlockEntries: 10}),
		"sources":    encodeSources(t, sourcesOf(es), Options{BlockEntries: 50}),
		"results":    EncodeResults([]uint16{0, 0, 0, 5, 5, 1, 0, 0}),
	}
}

func TestCorruption(t *testing.T) {
	for kind, good := range samples(t) {
		decode := decoders[kind]
		t.Run(kind, func(t *testing.T) {
			if err := decode(good); err != nil {
				t.Fatalf("the good blob: %v", err)
			}
			flips := len(good)
			if kind == "key stream" {
				// A stream reader stops at the index header: the
				// index and footer are OpenKeyIndex's to check.
				ix, err := OpenKeyIndex(bytes.NewReader(good), int64(len(good)))
				if err != nil {
					t.Fatal(err)
				}
				flips = int(ix.end) + headerLen
			}
			for i := range flips {
				bad := bytes.Clone(good)
				bad[i] ^= 0x10
				if err := decode(bad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d of %d flipped: %v, want ErrCorrupt", i, len(good), err)
				}
			}
			for n := range len(good) {
				err := decode(good[:n])
				// A cut at a block boundary leaves a shorter, well
				// formed stream, except for key blobs, which end in
				// their index.
				if err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("cut to %d bytes: %v, want ErrCorrupt", n, err)
				}
				if err == nil && (kind == "keys" || kind == "key stream" && n < flips) {
					t.Fatalf("key blob cut to %d bytes decoded", n)
				}
			}
			bad := bytes.Clone(good)
			bad[2] = version + 1
			if err := decode(bad); !errors.Is(err, ErrVersion) {
				t.Fatalf("unknown version: %v, want ErrVersion", err)
			}
		})
	}
}

func TestTruncationInsideBlock(t *testing.T) {
	good := samples(t)["edges"]
	err := decoders["edges"](good[:len(good)-1])
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("edges cut inside a block: %v, want ErrCorrupt and io.ErrUnexpectedEOF", err)
	}
}

// TestBlockOrder checks that a reader refuses blocks that are each well
// formed but out of order.
func TestBlockOrder(t *testing.T) {
	es := expansion(t, 4, 0)
	var buf bytes.Buffer
	w, _ := NewEdgeWriter(&buf, Options{})
	mid := len(es) / 2
	for _, e := range es[mid:] {
		_ = w.Add(e)
	}
	_, _ = w.EndSegment()
	second := bytes.Clone(buf.Bytes())
	buf.Reset()
	w, _ = NewEdgeWriter(&buf, Options{})
	for _, e := range es[:mid] {
		_ = w.Add(e)
	}
	_ = w.Close()
	if _, err := decodeEdges(append(second, buf.Bytes()...)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("blocks swapped: %v, want ErrCorrupt", err)
	}
}

func fuzzDecoder(f *testing.F, kind string) {
	for _, b := range samples(f) {
		f.Add(b)
	}
	decode := decoders[kind]
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := decode(b); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		// Random bytes almost never pass the checksums; with them
		// fixed, the payload decoders see every mutation.
		if err := decode(fixChecksums(b)); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("with checksums fixed: error %v does not wrap ErrCorrupt", err)
		}
	})
}

// fixChecksums returns a copy of b in which every block that fits has
// the right checksum.
func fixChecksums(b []byte) []byte {
	b = bytes.Clone(b)
	for off := 0; off+headerLen <= len(b); {
		end := off + headerLen + int(binary.LittleEndian.Uint32(b[off+8:]))
		if end < off || end+crcLen > len(b) {
			break
		}
		binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[off:end], castagnoli))
		off = end + crcLen
	}
	return b
}

func FuzzEdgeReader(f *testing.F)   { fuzzDecoder(f, "edges") }
func FuzzKeyReader(f *testing.F)    { fuzzDecoder(f, "keys") }
func FuzzSourceReader(f *testing.F) { fuzzDecoder(f, "sources") }
func FuzzResultReader(f *testing.F) { fuzzDecoder(f, "results") }

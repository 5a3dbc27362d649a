package packed

import (
	"bytes"
	"slices"
	"testing"
)

func TestResultsRoundTrip(t *testing.T) {
	mixed := make([]uint16, 100000)
	for i := range mixed {
		mixed[i] = uint16(i * 7919)
	}
	unknown := make([]uint16, 200000)
	unknown[5], unknown[70000] = 1, 3<<2|2
	tests := []struct {
		name  string
		words []uint16
		most  int // bytes
	}{
		{"empty", nil, 0},
		{"one", []uint16{0xffff}, 19},
		{"all unknown", make([]uint16, 65536), 21},
		{"few known", unknown, 100},
		{"all different", mixed, 2*len(mixed) + 2*(12+4+1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := EncodeResults(tc.words)
			if len(b) > tc.most {
				t.Errorf("%d words take %d bytes, want at most %d", len(tc.words), len(b), tc.most)
			}
			// EncodeResults writes the blocks from the words as they
			// are; a ResultWriter, from its copy: the same bytes.
			var buf bytes.Buffer
			w, err := NewResultWriter(&buf, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.words {
				if err := w.Add(v); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, buf.Bytes()) {
				t.Errorf("EncodeResults: %d bytes, unlike a ResultWriter's %d", len(b), buf.Len())
			}
			got, err := DecodeResults(nil, b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.words) {
				t.Fatalf("decoded %d words, not the %d written", len(got), len(tc.words))
			}
		})
	}
}

package packed

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func encodeSources(t testing.TB, lists [][]Ref, o Options) []byte {
	return encode(t, NewSourceWriter, lists, o)
}

func decodeSources(b []byte) ([][]Ref, error) {
	r := NewSourceReader(bytes.NewReader(b))
	var out [][]Ref
	var buf []Ref
	for {
		l, ok := r.Next(buf)
		if !ok {
			return out, r.Err()
		}
		out = append(out, slices.Clone(l))
		buf = l
	}
}

// sourcesOf groups sorted edges by position, as a bucket merge does.
func sourcesOf(es []Edge) [][]Ref {
	var out [][]Ref
	for i, e := range es {
		if i == 0 || e.Pos != es[i-1].Pos {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], e.Ref)
	}
	return out
}

func TestSourcesRoundTrip(t *testing.T) {
	max32 := ^uint32(0)
	tests := []struct {
		name  string
		lists [][]Ref
		block int
	}{
		{"empty", nil, 0},
		{"one", [][]Ref{{{0, 0}}}, 0},
		{"extremes", [][]Ref{{{max32, max32}}, {{0, 0}, {0, max32}, {max32, 0}, {max32, max32}}, {{1, 1}, {1, 1}}}, 0},
		{"ply 7, blocks of 3", sourcesOf(allEdges(t, 6)), 3},
		{"ply 9", sourcesOf(allEdges(t, 8)), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeSources(encodeSources(t, tc.lists, Options{BlockEntries: tc.block}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.lists) {
				t.Fatalf("decoded %d lists, want %d", len(got), len(tc.lists))
			}
			for i := range got {
				if !slices.Equal(got[i], tc.lists[i]) {
					t.Fatalf("list %d: got %v, want %v", i, got[i], tc.lists[i])
				}
			}
		})
	}
}

func TestSourceWriterRefuses(t *testing.T) {
	for _, refs := range [][]Ref{nil, {{2, 1}, {1, 5}}} {
		w, err := NewSourceWriter(&bytes.Buffer{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Add(refs); !errors.Is(err, ErrOrder) {
			t.Fatalf("Add(%v): %v, want ErrOrder", refs, err)
		}
	}
}

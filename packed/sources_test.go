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

// TestSourcesSkip: reading the sources of some positions and skipping the
// rest, whole blocks or within one, gives those positions' sources, and
// a skip past the end fails as Next does.
func TestSourcesSkip(t *testing.T) {
	lists := sourcesOf(allEdges(t, 6)) // ply 7's sources
	data := encodeSources(t, lists, Options{BlockEntries: 7})
	n := len(lists)
	tests := []struct {
		name   string
		wanted []int // the positions read, in order
	}{
		{"none", nil},
		{"first", []int{0}},
		{"last", []int{n - 1}},
		{"a block's last and the next's first", []int{6, 7}},
		{"within one block", []int{8, 10, 13}},
		{"blocks apart", []int{3, 70, 71, 500, n - 2}},
		{"every one", func() []int {
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			return all
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewSourceReader(bytes.NewReader(data))
			var buf []Ref
			at := 0
			for _, i := range tc.wanted {
				var ok bool
				if buf, ok = r.Skip(int64(i-at), buf); !ok {
					t.Fatalf("skipping to %d: %v", i, r.Err())
				}
				if buf, ok = r.Next(buf); !ok {
					t.Fatalf("reading %d: %v", i, r.Err())
				}
				if !slices.Equal(buf, lists[i]) {
					t.Fatalf("position %d: got %v, want %v", i, buf, lists[i])
				}
				at = i + 1
			}
			if _, ok := r.Skip(int64(n-at), buf); !ok || r.Count() != int64(n) {
				t.Fatalf("skipping to the end: %v, count %d of %d", r.Err(), r.Count(), n)
			}
			if _, ok := r.Skip(1, buf); ok || r.Err() != nil {
				t.Fatalf("skipping past the end: ok %v, %v; want false and a clean end", ok, r.Err())
			}
		})
	}
}

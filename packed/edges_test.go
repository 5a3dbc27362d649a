package packed

import (
	"bytes"
	"errors"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func encodeEdges(t testing.TB, es []Edge, o Options) []byte {
	return encode(t, NewEdgeWriter, es, o)
}

func decodeEdges(b []byte) ([]Edge, error) {
	r := NewEdgeReader(bytes.NewReader(b))
	var out []Edge
	for {
		e, ok := r.Next()
		if !ok {
			return out, r.Err()
		}
		out = append(out, e)
	}
}

func TestEdgesRoundTrip(t *testing.T) {
	p := func(side board.Color, occ, white uint64) board.Position {
		return board.Position{Side: side, Occ: occ, White: white}
	}
	full := ^uint64(0)
	tests := []struct {
		name  string
		edges []Edge
		block int
	}{
		{"empty", nil, 0},
		{"one", []Edge{{p(0, 0x0000001818000000, 0x0000000810000000), Ref{3, 7}}}, 0},
		{"equal edges", []Edge{{p(0, 1, 1), Ref{1, 1}}, {p(0, 1, 1), Ref{1, 1}}, {p(0, 1, 1), Ref{1, 2}}, {p(0, 1, 1), Ref{9, 0}}}, 0},
		{"extremes", []Edge{
			{p(0, 0, 0), Ref{0, 0}},
			{p(0, 1, 0), Ref{^uint32(0), ^uint32(0)}},
			{p(0, 1<<63, 1<<63), Ref{0, 0}},
			{p(0, full, 0), Ref{0, 0}},
			{p(0, full, full), Ref{^uint32(0), 0}},
			{p(0, full, full), Ref{^uint32(0), ^uint32(0)}},
			{p(1, 0, 0), Ref{5, 5}},
			{p(1, full, 1), Ref{5, 5}},
		}, 0},
		{"ply 6, blocks of 7", expansion(t, 5, 0), 7},
		{"ply 8 run", expansion(t, 7, 0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeEdges(t, tc.edges, Options{BlockEntries: tc.block})
			got, err := decodeEdges(b)
			if err != nil {
				t.Fatal(err)
			}
			checkDecoded(t, "edges", got, tc.edges)
		})
	}
}

func TestEdgeWriterRefusesDisorder(t *testing.T) {
	w, err := NewEdgeWriter(&bytes.Buffer{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pos := board.Position{Occ: 3, White: 1}
	if err := w.Add(Edge{Pos: pos, Ref: Ref{2, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Edge{Pos: pos, Ref: Ref{2, 1}}); !errors.Is(err, ErrOrder) {
		t.Fatalf("Add out of order: %v, want ErrOrder", err)
	}
}

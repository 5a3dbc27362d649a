package packed

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func encodeEdges(t testing.TB, es []Edge, o Options) []byte {
	return encode(t, NewEdgeWriter, es, o)
}

// decodeEdges decodes b with an EdgeReader, both without and with
// reading ahead, and fails unless both give the same edges and error.
func decodeEdges(b []byte) ([]Edge, error) {
	seq, err := readEdges(NewEdgeReader(bytes.NewReader(b)))
	for _, ahead := range []int{1, 3} {
		got, aerr := readEdges(NewEdgeReaderAhead(bytes.NewReader(b), ahead))
		if fmt.Sprint(aerr) != fmt.Sprint(err) || !slices.Equal(got, seq) {
			return nil, fmt.Errorf("reading %d blocks ahead: %d edges and error %v, without: %d edges and error %v", ahead, len(got), aerr, len(seq), err)
		}
	}
	return seq, err
}

// readEdges reads r to its end and closes it.
func readEdges(r *EdgeReader) ([]Edge, error) {
	defer r.Close()
	var out []Edge
	for {
		e, ok := r.Next()
		if !ok {
			return out, r.Err()
		}
		out = append(out, e)
	}
}

// position is a test's position, written in one call.
func position(side board.Color, occ, white uint64) board.Position {
	return board.Position{Side: side, Occ: occ, White: white}
}

func TestEdgesRoundTrip(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		p := position
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
	})
}

// TestEdgeWriterRefusesDisorder adds every ordered pair of a few edges
// that differ in each field the order looks at (side, occupancy, white
// discs, blob, index): the writer must refuse the second exactly when
// CompareEdges puts it before the first.
func TestEdgeWriterRefusesDisorder(t *testing.T) {
	var edges []Edge
	for _, side := range []board.Color{board.Black, board.White} {
		for _, pos := range []board.Position{{Occ: 3, White: 1}, {Occ: 3, White: 2}, {Occ: 5, White: 1}} {
			for _, ref := range []Ref{{1, 2}, {2, 1}, {2, 2}} {
				pos.Side = side
				edges = append(edges, Edge{Pos: pos, Ref: ref})
			}
		}
	}
	for _, a := range edges {
		for _, b := range edges {
			w, err := NewEdgeWriter(&bytes.Buffer{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Add(a); err != nil {
				t.Fatal(err)
			}
			err = w.Add(b)
			if want := CompareEdges(b, a) < 0; errors.Is(err, ErrOrder) != want || !want && err != nil {
				t.Errorf("Add(%v) after %v: %v, want ErrOrder %v", b, a, err, want)
			}
		}
	}
}

// TestEdgeReaderAheadClose stops readers that read ahead at every point
// of a run of many blocks: Close must end the reading goroutine (which
// may be waiting for a free buffer) and later reads must fail.
func TestEdgeReaderAheadClose(t *testing.T) {
	es := expansion(t, 5, 0)
	b := encodeEdges(t, es, Options{BlockEntries: 10})
	for _, stop := range []int{0, 1, 9, 10, 11, 55, len(es)} {
		r := NewEdgeReaderAhead(bytes.NewReader(b), 2)
		for i := range stop {
			e, ok := r.Next()
			if !ok || e != es[i] {
				t.Fatalf("edge %d: %v %v, want %v", i, e, ok, es[i])
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		<-r.ahead.done
		if _, ok := r.Next(); ok || r.Err() == nil && stop < len(es) {
			t.Fatalf("stopped after %d edges: Next after Close gave %v, error %v", stop, ok, r.Err())
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

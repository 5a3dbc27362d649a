package packed

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// Real data: the distinct canonical positions of 8x8 by ply, found the way
// the pipeline finds them, and the edges an expansion of a ply writes.

// blobPositions is the pipeline's final blob size.
const blobPositions = 65536

var (
	plyMu    sync.Mutex
	plyCache = map[int][]board.Position{}
)

// plyPositions returns the sorted distinct canonical positions of 8x8 at
// ply.
func plyPositions(t testing.TB, ply int) []board.Position {
	t.Helper()
	plyMu.Lock()
	defer plyMu.Unlock()
	if ps, ok := plyCache[ply]; ok {
		return ps
	}
	b := board.MustNew(8)
	cur := []board.Position{b.Start()}
	for p := 0; p < ply; p++ {
		if ps, ok := plyCache[p+1]; ok {
			cur = ps
			continue
		}
		cur = distinct(childEdges(b, cur, 0))
		plyCache[p+1] = cur
	}
	return cur
}

// childEdges lists the edges from parents, all in final blob blob, to
// their distinct canonical children, as expand.Positions does.
func childEdges(b *board.Board, parents []board.Position, blob uint32) []Edge {
	var out []Edge
	kids := make([]board.Position, 0, 32)
	for i, p := range parents {
		kids, _ = b.Children(p, kids[:0])
		for _, k := range kids {
			out = append(out, Edge{Pos: k, Ref: Ref{Blob: blob, Index: uint32(i)}})
		}
	}
	return out
}

// distinct returns the sorted distinct positions of edges.
func distinct(es []Edge) []board.Position {
	ps := make([]board.Position, len(es))
	for i, e := range es {
		ps[i] = e.Pos
	}
	slices.SortFunc(ps, board.Compare)
	return slices.Compact(ps)
}

// expansion returns the sorted run that expanding final blob blob of ply
// writes: the edges from its blobPositions parents.
func expansion(t testing.TB, ply int, blob int) []Edge {
	ps := plyPositions(t, ply)
	lo := min(blob*blobPositions, len(ps))
	hi := min(lo+blobPositions, len(ps))
	es := childEdges(board.MustNew(8), ps[lo:hi], uint32(blob))
	slices.SortFunc(es, CompareEdges)
	return es
}

// allEdges returns every edge into ply+1, sorted: what the bucket merges
// of ply+1 read, with parents named by their final blob of ply.
func allEdges(t testing.TB, ply int) []Edge {
	ps := plyPositions(t, ply)
	var es []Edge
	for blob := 0; blob*blobPositions < len(ps); blob++ {
		lo, hi := blob*blobPositions, min((blob+1)*blobPositions, len(ps))
		for _, e := range childEdges(board.MustNew(8), ps[lo:hi], uint32(blob)) {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, CompareEdges)
	return es
}

// writer is what every writer of this package offers.
type writer[T any] interface {
	Add(T) error
	Close() error
}

// encode writes items with a writer made by newWriter and returns the
// blob.
func encode[T any, W writer[T]](t testing.TB, newWriter func(io.Writer, Options) (W, error), items []T, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := newWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := w.Add(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkDecoded fails t unless got equals want, entry by entry.
func checkDecoded[T comparable](t testing.TB, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("decoded %d %s, want %d", len(got), what, len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s %d: got %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

package expand

import (
	"bytes"
	"math/bits"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
)

// TestPositions: every parent's distinct canonical children, each once,
// named by the parent's index; the buffer grows once, to at least the
// moves (counted exactly for so few positions), keeping what dst held.
func TestPositions(t *testing.T) {
	b := board.MustNew(8)
	// Plies 0 to 3 from the start, expanded by hand.
	frontier := []board.Position{b.Start()}
	var all []board.Position
	for range 4 {
		var next []board.Position
		for _, p := range frontier {
			next, _ = b.Children(p, next)
		}
		all = append(all, next...)
		frontier = next
	}
	moves := 0
	for _, p := range all {
		moves += bits.OnesCount64(b.Moves(p))
	}
	dst := []dedup.Entry{{Ref: dedup.Ref{Blob: 99}}}
	entries, st := Positions(b, all, 7, allParents, dst)
	if cap(entries) < 1+moves || entries[0].Ref.Blob != 99 {
		t.Fatalf("capacity %d for %d moves after 1 entry; first entry %+v", cap(entries), moves, entries[0])
	}
	if st.Edges != int64(moves) {
		t.Errorf("%d edges, want the %d moves", st.Edges, moves)
	}
	i := 1
	for j, p := range all {
		kids, _ := b.Children(p, nil)
		if len(kids) == 0 {
			continue
		}
		for _, k := range kids {
			if e := entries[i]; e.Pos != k || e.Ref != (dedup.Ref{Blob: 7, Index: uint32(j)}) {
				t.Fatalf("entry %d: %+v, want child %v of parent %d", i, e, k, j)
			}
			i++
		}
	}
	if i != len(entries) {
		t.Errorf("%d entries, want %d", len(entries), i)
	}
}

// TestBufferReuse: a buffer that ran a larger task before packs the next
// task's edges to the same bytes and cuts as a new buffer does, so no
// edge or byte of the earlier task leaks into the next.
func TestBufferReuse(t *testing.T) {
	b := board.MustNew(8)
	var plies [][]board.Position // plies 1 to 5, with duplicates
	frontier := []board.Position{b.Start()}
	for range 5 {
		var next []board.Position
		for _, p := range frontier {
			next, _ = b.Children(p, next)
		}
		plies = append(plies, next)
		frontier = next
	}
	// Splitters between ply 4's children, and one past them all.
	small, large := plies[3], plies[4]
	splitters := []board.Position{large[len(large)/3], {Side: board.White, Occ: ^uint64(0), White: ^uint64(0)}}
	slices.SortFunc(splitters, board.Compare)

	used := new(buffer)
	if _, _, _, err := used.run(b, large, 1, terminalOnly, splitters); err != nil {
		t.Fatal(err)
	}
	gotData, gotCuts, gotSt, err := used.run(b, small, 2, allParents, splitters)
	if err != nil {
		t.Fatal(err)
	}
	wantData, wantCuts, wantSt, err := new(buffer).run(b, small, 2, allParents, splitters)
	if err != nil {
		t.Fatal(err)
	}
	if gotSt != wantSt || !slices.Equal(gotCuts, wantCuts) || !bytes.Equal(gotData, wantData) {
		t.Fatalf("reused buffer: %+v, cuts %v, %d bytes; new buffer: %+v, cuts %v, %d bytes",
			gotSt, gotCuts, len(gotData), wantSt, wantCuts, len(wantData))
	}
	if gotSt.Edges == 0 || len(gotCuts) != len(splitters)+2 {
		t.Fatalf("expected edges in every bucket's cuts: %+v, cuts %v", gotSt, gotCuts)
	}
}

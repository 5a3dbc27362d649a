package expand

import (
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
)

// An edge is an edge of one expansion task in 16 bytes (packed.Word),
// half a dedup.Entry, ordered as its entry is once the sides are apart
// (splitSides). Every edge of a task has the same parent blob, and the
// parents' indexes leave room beside the child's white discs because
// every child of a ply has the same number of discs (a move adds one,
// a pass is folded into a move): Occ is the child's occupied squares;
// Low is the child's side to move in its top bit, then its white bits
// (packed.WhiteBits, one per disc: for one occupancy they sort as the
// white discs do), then the parent's index in the low indexBits bits.
// Sorting edges as 128-bit numbers, Occ first, then sorts them by
// occupancy, side, white discs and parent, and splitting the sides apart
// by a stable pass (splitSides), or sorting each side's edges apart
// (firstpass.go), gives packed.CompareEdges's order: side, occupancy,
// white discs, parent. Half the bytes of an entry, and with a key that a
// radix sort can take bits from without looking at fields, it sorts at
// several times the speed (sort.go); and the run's writer takes the
// words as they are (packed.EdgeWriter.AddWords).
type edge = packed.Word

// layout is how a task's edges share Low: the parent's index takes the
// low indexBits bits.
//
// For a child ply that keeps backtracking rows for its terminal
// positions only (runstore.Ply.TerminalSources, the target ply of a run
// that does not solve), those bits hold the parent's index plus one for
// a terminal child and 0, no parent, for any other: the merges drop the
// parents of a child that is not terminal, so the run need not carry
// them. A child's edges from its several parents in the task are then
// one edge, written once (pack), and the combines and merges drop such
// edges from other tasks as the exact duplicates they are. That is a
// third of the edges of 8x8 ply 14 and about half the bits of each
// (docs/performance.md). The run names the parents as the ply's record
// says (runstore.Ply.RunRef, ref).
type layout struct {
	indexBits uint
	next      *runstore.Ply // the child ply's record
}

// edgeLayout returns the layout for the children of positions, and
// false when they do not fit in Low: a side bit, a white bit for every
// disc of a child and the bits of the largest parent index are more
// than 64. That takes 8x8 children of some 40 discs and more from final
// blobs of a million positions, which no run reaches; those are sorted
// as entries (buffer.run). With TerminalSources the largest index field
// is the number of positions (layout).
func edgeLayout(positions []board.Position, next *runstore.Ply) (layout, bool) {
	l := layout{next: next}
	if len(positions) == 0 {
		return l, true
	}
	discs := 0
	for _, p := range positions {
		discs = max(discs, bits.OnesCount64(p.Occ)+1)
	}
	largest := len(positions) - 1
	if next.TerminalSources {
		largest++
	}
	l.indexBits = uint(bits.Len(uint(largest)))
	return l, 1+uint(discs)+l.indexBits <= 64
}

// generated is what generate tells of the edges it appended.
type generated struct {
	whites int     // how many have white to move (splitSides)
	occ    occSpan // where their occupancies differ (sortEdges)
}

// generate appends to dst the edges from each non-terminal position to
// its distinct canonical children, as Positions does, growing dst as it
// must (runEdges gives it room first: reserve).
func (l layout) generate(b *board.Board, positions []board.Position, dst []edge) ([]edge, Stats, generated) {
	g := generated{occ: emptySpan}
	es, st := children(b, positions, dst, func(i int, kids []board.Position, terminal uint64, es []edge) []edge {
		packed.ExtractWhites(kids) // their white bits, in one call
		w, and, or := 0, g.occ.and, g.occ.or
		for j, k := range kids {
			w += int(k.Side)
			and &= k.Occ
			or |= k.Occ
			es = append(es, l.edge(i, k, terminal>>j&1 == 1))
		}
		g.whites += w
		g.occ = occSpan{and, or}
		return es
	})
	return es, st, g
}

// edge is the edge from parent i to child k, terminal or not, its white
// bits already extracted (packed.ExtractWhites).
func (l layout) edge(i int, k board.Position, terminal bool) edge {
	return edge{Occ: k.Occ, Low: uint64(k.Side)<<63 | k.White<<l.indexBits | l.parent(i, terminal)}
}

// parent is the index field of the edge from parent i to a child,
// terminal or not: none (0) where the child keeps no backtracking rows
// (runstore.Ply.KeepsSources). board.ChildrenTerminal has told whether
// the child is terminal, so no terminal test is made here.
func (l layout) parent(i int, terminal bool) uint64 {
	switch {
	case !l.next.KeepsSources(terminal):
		return 0
	case l.next.TerminalSources:
		return uint64(i) + 1
	}
	return uint64(i)
}

// refs says how the index fields of the run of blob's task name their
// parents (runstore.Ply.RunRef, layout.parent): a field is the parent's
// index; with TerminalSources, 0 names none (packed.Ref{}, the edges of
// a child of several parents that names none of them are then equal
// words, written once), and a field f above it names parent f-1 as
// RunRef does, by f-1 or, where the refs mark terminal positions, f.
func (l layout) refs(blob uint32) packed.WordRefs {
	r := packed.WordRefs{IndexBits: l.indexBits, Blob: blob}
	if l.next.TerminalSources {
		r.NoneAtZero = true
		r.Less = 1 - l.next.RunRef(dedup.Ref{Blob: blob}, true).Index
	}
	return r
}

// edgeRun is a sortedRun of the 16-byte edges of a task of final blob
// blob. It gives the writer the edges' white bits as they are.
type edgeRun struct {
	l    layout
	es   []edge
	blob uint32
}

func (r edgeRun) len() int { return len(r.es) }

func (r edgeRun) pos(i int) board.Position {
	side, white, _ := r.l.fields(r.es[i])
	occ := r.es[i].Occ
	return board.Position{Side: side, Occ: occ, White: packed.WhiteDiscs(occ, white)}
}

func (r edgeRun) add(w *packed.EdgeWriter, lo, hi int) (int, error) {
	return w.AddWords(r.es[lo:hi], r.l.refs(r.blob))
}

// fields returns the child's side to move and white bits, and the
// parent's index, of e.
func (l layout) fields(e edge) (side board.Color, white uint64, index uint32) {
	return board.Color(e.Low >> 63), e.Low &^ (1 << 63) >> l.indexBits, uint32(e.Low & (1<<l.indexBits - 1))
}

// splitSides moves the edges of es with white to move (whites of them)
// after the others, keeping the order within each side. tmp, at least
// as long as the fewer side's edges, is scratch space: those are taken
// out to it and put back once the others have moved together in place.
// Nearly every child of a ply has the same side to move (only a pass
// changes it), so most edges are stored back to the line just read,
// where moving them all to tmp wrote every line anew.
func splitSides(es, tmp []edge, whites int) {
	blacks := len(es) - whites
	switch {
	case whites == 0 || blacks == 0:
	case whites <= blacks:
		b, w := 0, 0
		for _, e := range es {
			if e.Low>>63 == 0 {
				es[b] = e
				b++
			} else {
				tmp[w] = e
				w++
			}
		}
		copy(es[b:], tmp[:w])
	default:
		// From the end: the whites move up in place, the blacks go to tmp.
		b, w := blacks, len(es)
		for i := len(es) - 1; i >= 0; i-- {
			if e := es[i]; e.Low>>63 != 0 {
				w--
				es[w] = e
			} else {
				b--
				tmp[b] = e
			}
		}
		copy(es, tmp[:blacks])
	}
}

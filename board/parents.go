package board

import "math/bits"

// Parents appends to dst the distinct canonical positions from which one
// legal move leads to p or to one of its images, and returns dst. It is
// Children run backwards: c is among Children(q) exactly when
// Canonical(q) is among Parents(c). Whether a parent can be reached from
// the start is not its concern; a run's ply before p's says that.
//
// It undoes a move: the side that moved (the opponent of p's side to
// move, or p's side when the opponent passed) took a square s of its own,
// and in each direction turned a run of discs that now ends in one of its
// own. Any prefix of the run of its discs next to s, short of the whole
// run, may have been turned, and a move turned at least one disc. A
// direction where s now sees discs of the other side closed by one of the
// mover's would have turned them, so s cannot be the move. Each choice is
// played forward again (apply), which checks the side to move as well.
//
// Images of p need no search of their own: a move commutes with the
// symmetries, so a parent of an image of p is an image of a parent of p.
func (b *Board) Parents(p Position, dst []Position) []Position {
	base := len(dst)
	for _, mover := range [2]Color{p.Side.Opponent(), p.Side} {
		own := p.White
		if mover == Black {
			own = p.Black()
		}
		for m := own; m != 0; m &= m - 1 {
			dst = b.undo(p, mover, own, bits.TrailingZeros64(m), dst, base)
		}
	}
	return dst
}

// undo appends the canonical parents in which mover played sq to reach p,
// skipping those already in dst[base:].
func (b *Board) undo(p Position, mover Color, own uint64, sq int, dst []Position, base int) []Position {
	opp := p.Occ &^ own
	// lines[d] lists the squares of direction d from sq that may have been
	// turned: the mover's discs next to sq, all but the last of the run.
	var lines [8][]int
	r0, c0 := sq/8, sq%8
	for d, step := range directions {
		var run []int
		r, c := r0+step[0], c0+step[1]
		for b.inside(r, c) && own>>uint(r*8+c)&1 != 0 {
			run = append(run, r*8+c)
			r, c = r+step[0], c+step[1]
		}
		if len(run) == 0 {
			// Nothing of the mover's next to sq here: the move would have
			// turned the other side's discs on this line if they were
			// closed by one of the mover's.
			n := 0
			for b.inside(r, c) && opp>>uint(r*8+c)&1 != 0 {
				n++
				r, c = r+step[0], c+step[1]
			}
			if n > 0 && b.inside(r, c) && own>>uint(r*8+c)&1 != 0 {
				return dst
			}
			continue
		}
		lines[d] = run[:len(run)-1]
	}
	// Count through every choice of prefix lengths, direction by
	// direction, like an odometer; the all-zero choice turns nothing.
	var turned [8]int
	for {
		d := 0
		for ; d < 8; d++ {
			if turned[d] < len(lines[d]) {
				turned[d]++
				break
			}
			turned[d] = 0
		}
		if d == 8 {
			return dst
		}
		var f uint64
		for d, k := range turned {
			for _, s := range lines[d][:k] {
				f |= 1 << uint(s)
			}
		}
		x := uint64(1) << uint(sq)
		q := Position{Occ: p.Occ &^ x, White: opp | f, Side: mover}
		if mover == White {
			q.White = own &^ x &^ f
		}
		if b.Flips(q, sq) != f {
			continue
		}
		if c, _ := b.apply(q, sq, f); c != p {
			continue
		}
		dst = appendDistinct(dst, base, b.Canonical(q))
	}
}

// directions are the eight steps (rows, columns) from a square.
var directions = [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}

// inside reports whether row r, column c is on the board.
func (b *Board) inside(r, c int) bool { return r >= 0 && r < b.size && c >= 0 && c < b.size }

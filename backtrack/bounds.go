package backtrack

import "github.com/reversi-cloud/reversi/board"

// The solve modes root and wld (runstore.Config.SolveMode) solve a
// frontier position only as far as its parents need: a bound often
// settles a parent as well as an exact score would. Bounds travel in
// results words and notices like exact scores, and a parent's bounds are
// the minimax of its children's.

// BoundsScore is a score known only to lie in [lo, hi], lo < hi.
func BoundsScore(lo, hi int) Score { return Score{Diff: int8(lo), Upper: int8(hi), Bounded: true} }

// Interval is what s says of the differential on a board of squares
// squares: it lies in [lo, hi].
func (s Score) Interval(squares int) (lo, hi int) {
	switch {
	case s.Exact:
		return int(s.Diff), int(s.Diff)
	case s.Bounded:
		return int(s.Diff), int(s.Upper)
	}
	return -squares, squares
}

// IntervalScore is the score of a differential known to lie in [lo, hi]
// on a board of squares squares: exact when they meet, unknown when they
// say nothing.
func IntervalScore(lo, hi, squares int) Score {
	switch {
	case lo == hi:
		return DiffScore(lo)
	case lo <= -squares && hi >= squares:
		return Score{}
	}
	return BoundsScore(max(lo, -squares), min(hi, squares))
}

// noBound stands for the end of an interval no bound closes, beyond every
// board's scores.
const noBound = 127

// boundsOf is the interval a notice gives its child's differential, with
// noBound for an open end; ok is false when it says nothing.
func (n Notice) boundsOf() (lo, hi int, ok bool) {
	switch {
	case n.Score.Exact:
		return int(n.Score.Diff), int(n.Score.Diff), true
	case n.Score.Bounded:
		lo, hi = int(n.Score.Diff), int(n.Score.Upper)
	default:
		lo, hi = -noBound, noBound
	}
	// A result alone bounds the differential too (it is even, so a win
	// is at least 2).
	switch n.Result {
	case board.BlackWins:
		lo = max(lo, 2)
	case board.WhiteWins:
		hi = min(hi, -2)
	case board.Draw:
		lo, hi = 0, 0
	}
	return lo, hi, lo > -noBound || hi < noBound
}

// addBounds counts a notice's bounds into the tally of a parent whose
// side to move is side.
func (t *Tally) addBounds(side board.Color, n Notice) {
	lo, hi, ok := n.boundsOf()
	if !ok {
		return
	}
	if side == board.White {
		lo, hi = -hi, -lo
	}
	if t.Bounded == 0 {
		t.lower, t.upper = int8(lo), int8(hi)
	} else {
		t.lower, t.upper = max(t.lower, int8(lo)), max(t.upper, int8(hi))
	}
	t.Bounded++
}

// Lower is the best differential the side to move is known to reach
// (its own: the mover's discs minus the other side's), from the children
// that reported; below every score when none did.
func (t Tally) Lower(squares int) int {
	if t.Bounded == 0 {
		return -squares - 1
	}
	return max(int(t.lower), -squares)
}

// Bounds is the interval of the parent's differential, black minus
// white, on a board of squares squares, given that side is to move and
// the parent has children distinct canonical children: the best lower
// bound of its children for side, and once every child reported, the
// best upper bound.
func (t Tally) Bounds(side board.Color, children, squares int) (lo, hi int) {
	lo, hi = -squares, squares
	if t.Bounded > 0 {
		lo = max(int(t.lower), -squares)
	}
	if children > 0 && int(t.Bounded) >= children {
		hi = min(int(t.upper), squares)
	}
	if side == board.White {
		lo, hi = -hi, -lo
	}
	return lo, hi
}

package solve

import (
	"math/bits"
)

// Where the search changes its tools, in empty squares. Below each
// threshold a tool costs more per node than it saves (tuned on FFO #40 and
// #41 by node counts and instruction counts).
const (
	// tableMin: positions with at least this many empties use the
	// transposition table.
	tableMin = 8
	// etcMin: positions with at least this many empties look up their
	// children in the table before searching any (enhanced transposition
	// cutoff). From 9 rather than 10 (its children, with 8, are the fewest
	// the table holds): 2% fewer nodes on FFO #40 to #49, about the same
	// CPU.
	etcMin = 9
	// sortMin: positions with at least this many empties sort their moves
	// fastest first; smaller ones are left to last.go, which takes odd
	// quadrants first (parity). From 5 rather than 6 empties (where parity
	// and square classes ordered the moves): 15% fewer nodes on FFO #40 to
	// #49 for 3% more CPU.
	sortMin = 5
	// probeMin: positions with at least this many empties sort their
	// moves by a one-ply search with a mobility heuristic instead (two
	// plies ordered worse on the FFO positions).
	probeMin = 12
	// evalMin: positions with at least this many empties sort their moves
	// by a two-ply search with the evaluation (eval.go) instead. Below, it
	// costs more time than it saves nodes (from 15, FFO #40 to #49 took 3%
	// fewer nodes and 19% more CPU).
	evalMin = 16
	// deepMin: positions with at least this many empties search three
	// plies instead of two: 9% fewer nodes on FFO #40 to #49 (from 21,
	// 7%; from 22, 8%), for the same CPU.
	deepMin = 20
	// stableMin: positions with at least this many empties try a
	// stability cutoff when the window makes one possible: every position
	// search sorts (at 7 rather than 6, FFO #40, #42 and #47 took 3% more
	// nodes in the same time).
	stableMin = sortMin
)

// move is one candidate of a move list.
type move struct {
	sq   int
	flip uint64
	key  int // smaller is tried first
}

// moveList is big enough for any position's legal moves.
type moveList struct {
	n  int
	mv [64]move
}

// search returns the exact score for own if it lies in (alpha, beta), else
// a bound on the wrong side of the window (fail-soft). empties counts the
// empty squares.
func (s *Solver) search(own, opp uint64, alpha, beta, empties int) int {
	if empties < sortMin {
		return s.last(own, opp, alpha, beta, empties)
	}
	if s.nodes >= s.pollAt {
		s.poll()
	}
	empty, legal, score := s.expand(own, opp, alpha, beta, empties)
	if legal == 0 {
		return score
	}
	g := s.g
	// The opponent's stable discs cap the score; they can only be enough
	// for a cutoff once alpha is at least what they would cap it at if all
	// the opponent's discs were stable.
	if empties >= stableMin && alpha >= g.squares-2*bits.OnesCount64(opp) {
		if ub := g.stableBound(own, opp); ub <= alpha {
			return ub
		}
	}
	hint := -1
	alpha0, beta0 := alpha, beta
	if empties >= tableMin {
		if e, ok := s.tt.probe(own, opp); ok {
			lo, up := int(e.lower), int(e.upper)
			switch {
			case lo >= beta:
				return lo
			case up <= alpha:
				return up
			case lo == up:
				return lo
			}
			alpha, beta = max(alpha, lo), min(beta, up)
			hint = int(e.move)
		}
	}
	best, bestSq := s.searchMoves(own, opp, legal, empty, hint, alpha, beta, empties)
	if empties >= tableMin {
		lo, up := -g.squares, g.squares
		switch {
		case best <= alpha0:
			up = best
			bestSq = -1 // every move failed low: none is known to be best
		case best >= beta0:
			lo = best
		default:
			lo, up = best, best
		}
		s.tt.store(own, opp, empties, lo, up, bestSq)
	}
	return best
}

// searchMoves searches the legal moves of a node with the window (alpha,
// beta) and returns the best score (fail-soft) and the move that gave it.
// The table's move, hint, goes first, before the others are even ordered: at
// a node that fails high the first move cuts almost always, and a table
// move is usually the one that cut before, so most nodes the search comes
// back to never pay for ordering.
func (s *Solver) searchMoves(own, opp, legal, empty uint64, hint, alpha, beta, empties int) (best, bestSq int) {
	best, bestSq = -s.g.squares-1, -1
	searched := 0 // moves searched so far
	if hint >= 0 && legal>>uint(hint)&1 != 0 {
		x := uint64(1) << uint(hint)
		f := flips(hint, own, opp)
		v := -s.search(opp&^f, own|f|x, -beta, -alpha, empties-1)
		best, bestSq = v, hint
		if v >= beta {
			return best, bestSq
		}
		alpha = max(alpha, v)
		legal &^= x
		searched = 1
		if legal == 0 {
			return best, bestSq
		}
	}
	ml := &s.lists[empties]
	s.order(ml, own, opp, legal, empty, empties)
	if empties >= etcMin {
		// Enhanced transposition cutoff: a child the table already knows
		// to be bad enough for the opponent refutes the window at once.
		for i := 0; i < ml.n; i++ {
			m := &ml.mv[i]
			x := uint64(1) << uint(m.sq)
			if e, ok := s.tt.probe(opp&^m.flip, own|m.flip|x); ok && -int(e.upper) >= beta {
				return -int(e.upper), m.sq
			}
		}
	}
	return s.searchList(ml, 0, own, opp, alpha, beta, empties, best, bestSq, searched)
}

// searchList searches the moves of ml but those onto squares of skip, in
// order, for the node own to move against opp with the window (alpha,
// beta), after searched others whose best was best by bestSq; it returns
// the best score (fail-soft) and the move that gave it. The first move
// searched gets the full window; the others are proved no better with a
// null window and searched again in full only when that fails (principal
// variation search). In a parallel solve a move another thread is
// searching waits until the others are done.
func (s *Solver) searchList(ml *moveList, skip, own, opp uint64, alpha, beta, empties, best, bestSq, searched int) (int, int) {
	var deferred uint64
	for k := 0; ; k++ {
		i, ok := next(ml, k, &deferred)
		if !ok {
			break
		}
		m := &ml.mv[i]
		x := uint64(1) << uint(m.sq)
		if skip&x != 0 {
			continue
		}
		cown, copp := opp&^m.flip, own|m.flip|x
		// Every thread searches the node's first move (the table's, else
		// the list's first) and, once the others are done, the deferred
		// ones (k from ml.n on); the rest are shared out.
		shared := (searched > 0 || k > 0) && k < ml.n
		h, mark := s.claim(cown, copp, shared, empties)
		if mark < 0 {
			deferred |= 1 << uint(i)
			continue
		}
		var v int
		if searched == 0 || beta-alpha == 1 {
			v = -s.search(cown, copp, -beta, -alpha, empties-1)
		} else {
			v = -s.search(cown, copp, -alpha-1, -alpha, empties-1)
			if v > alpha && v < beta {
				v = -s.search(cown, copp, -beta, -alpha, empties-1)
			}
		}
		searched++
		s.release(h, mark)
		if v > best {
			best, bestSq = v, m.sq
			if v > alpha {
				alpha = v
				if v >= beta {
					break
				}
			}
		}
	}
	return best, bestSq
}

// order fills ml with the legal moves, best candidates first, by what the
// move leaves the opponent (the table's move is searched before order is
// called). High in the tree that is its weighted mobility (replies,
// corner replies counted twice) plus the evaluation after a two-ply probe
// (three from deepMin empties), one weighted reply counting as
// much as a disc; lower, its weighted mobility plus its best reply by a
// one-ply probe with a mobility heuristic; lower still the weighted
// mobility (fastest first), then, at an eighth of a reply each, the
// opponent's potential mobility (empty squares next to the mover's discs)
// and half a reply for a move in an even quadrant (parity).
func (s *Solver) order(ml *moveList, own, opp, legal, empty uint64, empties int) {
	g := s.g
	odd := s.oddQuadrants(empty)
	ml.n = 0
	for m := legal; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		x := uint64(1) << uint(sq)
		f := flips(sq, own, opp)
		cown, copp, cempty := opp&^f, own|f|x, empty&^x
		if empties >= etcMin {
			// The transposition cutoff after ordering probes every child:
			// their buckets load while the moves are ordered.
			s.tt.prefetch(cown, copp)
		}
		replies := moves(cown, copp, cempty)
		key := 4 * (bits.OnesCount64(replies) + bits.OnesCount64(replies&g.corners))
		switch {
		case cown == 0:
			key = -probeInf - 1 // a wipe-out wins outright
		case empties >= evalMin:
			depth := 2
			if empties >= deepMin {
				depth = 3
			}
			key = evalScale/4*key + s.probe(cown, copp, cempty, -probeInf, probeInf, depth, true)
		case empties >= probeMin:
			key = 4*key + s.probe(cown, copp, cempty, -probeInf, probeInf, 1, false)
		default:
			key = 2*key + bits.OnesCount64(adjacent(copp)&cempty)
			if odd&x == 0 {
				key += 4
			}
		}
		ml.insert(move{sq: sq, flip: f, key: key})
	}
}

// insert adds m to ml, kept sorted by key, after any moves of the same
// key: an insertion sort, as a position has a few dozen moves at most.
func (ml *moveList) insert(m move) {
	i := ml.n
	for ; i > 0 && ml.mv[i-1].key > m.key; i-- {
		ml.mv[i] = ml.mv[i-1]
	}
	ml.mv[i] = m
	ml.n++
}

// toFront moves the move onto sq, if ml has it, to the front.
func (ml *moveList) toFront(sq int) {
	for i := 0; i < ml.n; i++ {
		if ml.mv[i].sq == sq {
			m := ml.mv[i]
			copy(ml.mv[1:i+1], ml.mv[:i])
			ml.mv[0] = m
			return
		}
	}
}

// adjacent returns the squares next to any square of x in the frame.
func adjacent(x uint64) uint64 {
	return x<<8 | x>>8 | (x<<1|x>>7|x<<9)&^colA | (x>>1|x<<7|x>>9)&^colH
}

// probeInf bounds probe's values.
const probeInf = 1 << 20

// probe is a shallow alpha-beta search for move ordering: depth plies,
// then a heuristic. With eval the heuristic is the evaluation (eval.go)
// and a pass counts as a ply; without, it favours mobility, corner moves,
// corners and potential mobility (empty squares next to the opponent's
// discs), and stops at a pass.
func (s *Solver) probe(own, opp, empty uint64, alpha, beta, depth int, eval bool) int {
	g := s.g
	if depth == 0 && eval {
		return g.eval(own, opp)
	}
	legal := moves(own, opp, empty)
	if depth == 0 || legal == 0 {
		replies := moves(opp, own, empty)
		switch {
		case legal == 0 && replies == 0:
			return probeScale(eval) * g.score(own, opp)
		case !eval:
			return 16*(bits.OnesCount64(legal)-bits.OnesCount64(replies)) +
				8*(bits.OnesCount64(legal&g.corners)-bits.OnesCount64(replies&g.corners)) +
				32*(bits.OnesCount64(own&g.corners)-bits.OnesCount64(opp&g.corners)) +
				4*(bits.OnesCount64(adjacent(opp)&empty)-bits.OnesCount64(adjacent(own)&empty))
		}
		return -s.probe(opp, own, empty, -beta, -alpha, depth-1, eval)
	}
	best := -probeInf
	for m := legal; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		x := uint64(1) << uint(sq)
		f := flips(sq, own, opp)
		v := -s.probe(opp&^f, own|f|x, empty&^x, -beta, -alpha, depth-1, eval)
		if v > best {
			best = v
			if v > alpha {
				alpha = v
				if v >= beta {
					break
				}
			}
		}
	}
	return best
}

// probeScale is what one disc of a final score is worth to probe.
func probeScale(eval bool) int {
	if eval {
		return evalScale
	}
	return 1024
}

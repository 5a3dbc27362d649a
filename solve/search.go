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
	// cutoff).
	etcMin = 12
	// sortMin: positions with at least this many empties sort their moves
	// fastest first; smaller ones take odd quadrants first (parity), then
	// squares by class.
	sortMin = 6
	// probeMin: positions with at least this many empties sort their
	// moves by a one-ply search with a mobility heuristic instead (two
	// plies ordered worse on the FFO positions).
	probeMin = 12
	// evalMin: positions with at least this many empties sort their moves
	// by a two-ply search with the evaluation (eval.go) instead. Below, it
	// costs more time than it saves nodes; a third and fourth ply from 20
	// empties saved nodes on some FFO positions and cost them on others.
	evalMin = 16
	// stableMin: positions with at least this many empties try a
	// stability cutoff when the window makes one possible.
	stableMin = 7
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
		return s.shallow(own, opp, alpha, beta, empties)
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
	ml := &s.lists[empties]
	s.order(ml, own, opp, legal, empty, hint, empties)
	if empties >= etcMin {
		// Enhanced transposition cutoff: a child the table already knows
		// to be bad enough for the opponent refutes the window at once.
		for i := 0; i < ml.n; i++ {
			m := &ml.mv[i]
			x := uint64(1) << uint(m.sq)
			if e, ok := s.tt.probe(opp&^m.flip, own|m.flip|x); ok && -int(e.upper) >= beta {
				return -int(e.upper)
			}
		}
	}
	best, bestSq := -g.squares-1, -1
	var deferred uint64
	for k := 0; ; k++ {
		i, ok := next(ml, k, &deferred)
		if !ok {
			break
		}
		m := &ml.mv[i]
		x := uint64(1) << uint(m.sq)
		cown, copp := opp&^m.flip, own|m.flip|x
		h, mark := s.claim(cown, copp, k, ml.n, empties)
		if mark < 0 {
			deferred |= 1 << uint(i)
			continue
		}
		var v int
		if k == 0 || beta-alpha == 1 {
			v = -s.search(cown, copp, -beta, -alpha, empties-1)
		} else {
			// Principal variation search: prove the move no better than
			// the best so far with a null window, and search it again in
			// full only when that fails.
			v = -s.search(cown, copp, -alpha-1, -alpha, empties-1)
			if v > alpha && v < beta {
				v = -s.search(cown, copp, -beta, -alpha, empties-1)
			}
		}
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

// expand counts a node and finds its empty squares and legal moves. With
// no legal move it also returns the node's score: the game's end, or the
// opponent's score negated after a pass.
func (s *Solver) expand(own, opp uint64, alpha, beta, empties int) (empty, legal uint64, score int) {
	s.nodes++
	empty = s.g.mask &^ (own | opp)
	legal = moves(own, opp, empty)
	if legal != 0 {
		return empty, legal, 0
	}
	if moves(opp, own, empty) == 0 {
		return empty, 0, s.g.score(own, opp)
	}
	return empty, 0, -s.search(opp, own, -beta, -alpha, empties)
}

// order fills ml with the legal moves, best candidates first: the table's
// move, then by what the move leaves the opponent. High in the tree that
// is its weighted mobility (replies, corner replies counted twice) plus
// the evaluation after a two-ply probe, one weighted reply counting as
// much as a disc; lower, its weighted mobility plus its best reply by a
// one-ply probe with a mobility heuristic; lower still the weighted
// mobility alone (fastest first), ties broken towards odd quadrants.
func (s *Solver) order(ml *moveList, own, opp, legal, empty uint64, hint, empties int) {
	g := s.g
	odd := s.oddQuadrants(empty)
	ml.n = 0
	for m := legal; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		x := uint64(1) << uint(sq)
		f := flips(sq, own, opp)
		cown, copp, cempty := opp&^f, own|f|x, empty&^x
		replies := moves(cown, copp, cempty)
		key := 4 * (bits.OnesCount64(replies) + bits.OnesCount64(replies&g.corners))
		switch {
		case cown == 0:
			key = -probeInf - 1 // a wipe-out wins outright
		case empties >= evalMin:
			key = evalScale/4*key + s.probe(cown, copp, cempty, -probeInf, probeInf, 2, true)
		case empties >= probeMin:
			key = 4*key + s.probe(cown, copp, cempty, -probeInf, probeInf, 1, false)
		case odd&x == 0:
			key++
		}
		if sq == hint {
			key = -probeInf - 2
		}
		// Insertion sort: a position has a few dozen moves at most.
		i := ml.n
		for ; i > 0 && ml.mv[i-1].key > key; i-- {
			ml.mv[i] = ml.mv[i-1]
		}
		ml.mv[i] = move{sq: sq, flip: f, key: key}
		ml.n++
	}
}

// adjacent returns the squares next to any square of x in the frame.
func adjacent(x uint64) uint64 {
	return x<<8 | x>>8 | (x<<1|x>>7|x<<9)&^colA | (x>>1|x<<7|x>>9)&^colH
}

// oddQuadrants returns the empty squares in quadrants with an odd number
// of empties: playing there tends to leave the last move in the quadrant to
// the mover.
func (s *Solver) oddQuadrants(empty uint64) uint64 {
	var odd uint64
	for e := empty; e != 0; {
		q := s.g.quadrant[bits.TrailingZeros64(e)] & empty
		if bits.OnesCount64(q)&1 != 0 {
			odd |= q
		}
		e &^= q
	}
	return odd
}

// shallow is search for few empties: no table, no sorting, moves in
// parity and square-class order.
func (s *Solver) shallow(own, opp uint64, alpha, beta, empties int) int {
	if empties <= 4 {
		return s.last(own, opp, alpha, beta, empties)
	}
	empty, legal, score := s.expand(own, opp, alpha, beta, empties)
	if legal == 0 {
		return score
	}
	g := s.g
	odd := s.oddQuadrants(empty)
	best := -g.squares - 1
	for _, group := range [2]uint64{legal & odd, legal &^ odd} {
		for _, class := range g.priority {
			for m := group & class; m != 0; m &= m - 1 {
				sq := bits.TrailingZeros64(m)
				x := uint64(1) << uint(sq)
				f := flips(sq, own, opp)
				v := -s.shallow(opp&^f, own|f|x, -beta, -alpha, empties-1)
				if v > best {
					best = v
					if v > alpha {
						alpha = v
						if v >= beta {
							return v
						}
					}
				}
			}
		}
	}
	return best
}

// last solves positions with at most four empties without generating
// moves: each empty square is tried directly. Squares in odd quadrants go
// first.
func (s *Solver) last(own, opp uint64, alpha, beta, empties int) int {
	empty := s.g.mask &^ (own | opp)
	odd := s.oddQuadrants(empty)
	var sqs [4]int
	n := 0
	for _, group := range [2]uint64{empty & odd, empty &^ odd} {
		for m := group; m != 0; m &= m - 1 {
			sqs[n] = bits.TrailingZeros64(m)
			n++
		}
	}
	switch n {
	case 0:
		s.nodes++
		return s.g.score(own, opp)
	case 1:
		return s.last1(own, opp, sqs[0])
	}
	return s.lastN(own, opp, alpha, beta, sqs, n, false)
}

// lastN solves n (2 to 4) empties, sqs in the order to try them. passed
// reports that the opponent has just passed.
func (s *Solver) lastN(own, opp uint64, alpha, beta int, sqs [4]int, n int, passed bool) int {
	s.nodes++
	best := -s.g.squares - 1
	for i := 0; i < n; i++ {
		sq := sqs[i]
		f := flips(sq, own, opp)
		if f == 0 {
			continue
		}
		x := uint64(1) << uint(sq)
		var v int
		if n == 2 {
			v = -s.last1(opp&^f, own|f|x, sqs[1-i])
		} else {
			rest := sqs
			for j := i; j < n-1; j++ {
				rest[j] = sqs[j+1]
			}
			v = -s.lastN(opp&^f, own|f|x, -beta, -alpha, rest, n-1, false)
		}
		if v > best {
			best = v
			if v > alpha {
				alpha = v
				if v >= beta {
					return v
				}
			}
		}
	}
	if best < -s.g.squares {
		if passed {
			return s.g.score(own, opp)
		}
		return -s.lastN(opp, own, -beta, -alpha, sqs, n, true)
	}
	return best
}

// last1 scores the last empty square: the mover plays it if it can, else
// the opponent, else the game ends with it empty.
func (s *Solver) last1(own, opp uint64, sq int) int {
	s.nodes++
	diff := bits.OnesCount64(own) - bits.OnesCount64(opp)
	if f := flips(sq, own, opp); f != 0 {
		return diff + 2*bits.OnesCount64(f) + 1
	}
	if f := flips(sq, opp, own); f != 0 {
		return diff - 2*bits.OnesCount64(f) - 1
	}
	return s.g.score(own, opp)
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

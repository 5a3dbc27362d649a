package solve

import "math/bits"

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

// oddQuadrants returns the empty squares in quadrants with an odd number
// of empties: playing there tends to leave the last move in the quadrant to
// the mover.
func (s *Solver) oddQuadrants(empty uint64) uint64 {
	// Written out without branches: which quadrants are odd is as good as
	// random to the branch predictor.
	q := &s.g.quadrants
	q0, q1, q2, q3 := q[0]&empty, q[1]&empty, q[2]&empty, q[3]&empty
	return q0&-uint64(bits.OnesCount64(q0)&1) | q1&-uint64(bits.OnesCount64(q1)&1) |
		q2&-uint64(bits.OnesCount64(q2)&1) | q3&-uint64(bits.OnesCount64(q3)&1)
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
	case 2:
		return s.last2(own, opp, alpha, beta, sqs[0], sqs[1], false)
	case 3:
		return s.last3(own, opp, alpha, beta, sqs[0], sqs[1], sqs[2], false)
	}
	return s.last4(own, opp, alpha, beta, sqs[0], sqs[1], sqs[2], sqs[3], false)
}

// noScore is below every score: no move has been searched.
const noScore = -65

// last4, last3 and last2 solve 4, 3 and 2 empties, trying the squares in
// the order given and keeping that order for the rest; passed reports
// that the opponent has just passed. They are written out, with no move
// list to fill, for speed: most nodes of a solve are here.
func (s *Solver) last4(own, opp uint64, alpha, beta int, x1, x2, x3, x4 int, passed bool) int {
	s.nodes++
	best := noScore
	if f := flips(x1, own, opp); f != 0 {
		v := -s.last3(opp&^f, own|f|1<<uint(x1), -beta, -alpha, x2, x3, x4, false)
		if v >= beta {
			return v
		}
		best, alpha = v, max(alpha, v)
	}
	if f := flips(x2, own, opp); f != 0 {
		v := -s.last3(opp&^f, own|f|1<<uint(x2), -beta, -alpha, x1, x3, x4, false)
		if v >= beta {
			return v
		}
		best, alpha = max(best, v), max(alpha, v)
	}
	if f := flips(x3, own, opp); f != 0 {
		v := -s.last3(opp&^f, own|f|1<<uint(x3), -beta, -alpha, x1, x2, x4, false)
		if v >= beta {
			return v
		}
		best, alpha = max(best, v), max(alpha, v)
	}
	if f := flips(x4, own, opp); f != 0 {
		best = max(best, -s.last3(opp&^f, own|f|1<<uint(x4), -beta, -alpha, x1, x2, x3, false))
	}
	if best == noScore {
		if passed {
			return s.g.score(own, opp)
		}
		return -s.last4(opp, own, -beta, -alpha, x1, x2, x3, x4, true)
	}
	return best
}

func (s *Solver) last3(own, opp uint64, alpha, beta int, x1, x2, x3 int, passed bool) int {
	s.nodes++
	best := noScore
	if f := flips(x1, own, opp); f != 0 {
		v := -s.last2(opp&^f, own|f|1<<uint(x1), -beta, -alpha, x2, x3, false)
		if v >= beta {
			return v
		}
		best, alpha = v, max(alpha, v)
	}
	if f := flips(x2, own, opp); f != 0 {
		v := -s.last2(opp&^f, own|f|1<<uint(x2), -beta, -alpha, x1, x3, false)
		if v >= beta {
			return v
		}
		best, alpha = max(best, v), max(alpha, v)
	}
	if f := flips(x3, own, opp); f != 0 {
		best = max(best, -s.last2(opp&^f, own|f|1<<uint(x3), -beta, -alpha, x1, x2, false))
	}
	if best == noScore {
		if passed {
			return s.g.score(own, opp)
		}
		return -s.last3(opp, own, -beta, -alpha, x1, x2, x3, true)
	}
	return best
}

func (s *Solver) last2(own, opp uint64, alpha, beta int, x1, x2 int, passed bool) int {
	s.nodes++
	best := noScore
	if f := flips(x1, own, opp); f != 0 {
		v := -s.last1(opp&^f, own|f|1<<uint(x1), x2)
		if v >= beta {
			return v
		}
		best = v
	}
	if f := flips(x2, own, opp); f != 0 {
		best = max(best, -s.last1(opp&^f, own|f|1<<uint(x2), x1))
	}
	if best == noScore {
		if passed {
			return s.g.score(own, opp)
		}
		return -s.last2(opp, own, -beta, -alpha, x1, x2, true)
	}
	return best
}

// last1 scores the last empty square: the mover plays it if it can, else
// the opponent, else the game ends with it empty. Only the flips are
// counted: no disc is placed.
func (s *Solver) last1(own, opp uint64, sq int) int {
	s.nodes++
	// Every other square is taken: own and opp hold squares-1 discs.
	diff := 2*bits.OnesCount64(own) + 1 - s.g.squares
	if n := lastFlips(sq, own); n != 0 {
		return diff + 2*n + 1
	}
	if n := lastFlips(sq, opp); n != 0 {
		return diff - 2*n - 1
	}
	return s.g.score(own, opp)
}

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
// the opponent, else the game ends with it empty. Only the flips are
// counted: no disc is placed.
func (s *Solver) last1(own, opp uint64, sq int) int {
	s.nodes++
	diff := bits.OnesCount64(own) - bits.OnesCount64(opp)
	if n := lastFlips(sq, own); n != 0 {
		return diff + 2*n + 1
	}
	if n := lastFlips(sq, opp); n != 0 {
		return diff - 2*n - 1
	}
	return s.g.score(own, opp)
}

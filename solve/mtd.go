package solve

import "math/bits"

// The root's first move is solved by null-window tests around a guess of
// its score (an MTD(f)-like driver) rather than with the full window: a
// window of two scores prunes far more of the tree, and the table carries
// what one test learnt to the next. The guess comes from a depth-limited
// search with the evaluation; it only decides where the tests start, so a
// poor guess costs nodes, never exactness.

// guessLeave: the guess's search stops this many empties from the end,
// and guessMaxDepth bounds its plies.
const (
	guessLeave    = 14
	guessMaxDepth = 12
)

// guess returns an estimate of the score of own to move against opp, a
// score the board can have (even, within the board's squares).
func (s *Solver) guess(own, opp uint64, empties int) int {
	return s.g.evenScore(s.estimate(own, opp, empties))
}

// estimate is guess's estimate in evalScale units, before rounding.
func (s *Solver) estimate(own, opp uint64, empties int) int {
	depth := min(max(empties-guessLeave, 1), guessMaxDepth)
	return s.mid(own, opp, -probeInf, probeInf, depth, empties, false)
}

// evenScore rounds an estimate in evalScale units to the nearest score
// the board can have: even, within its squares.
func (g *geometry) evenScore(est int) int {
	v := (est + evalScale*(g.squares+1)) / (2 * evalScale) * 2
	return min(max(v-g.squares, -g.squares), g.squares)
}

// mtd returns the exact score of own to move against opp, known to lie in
// [lo, up], by tests of three scores each, (guess-1, guess+1): scores are
// even, so a test says whether the score is below, at or above guess.
// Each test starts from the bound the last one returned (a fail-soft bound
// may jump several scores) until tests have failed on both sides of the
// score, then they bisect.
func (s *Solver) mtd(own, opp uint64, empties, lo, up, guess int) int {
	return mtdSteps(lo, up, guess, func(alpha, beta int) int { return s.search(own, opp, alpha, beta, empties) })
}

// mtdSteps is mtd for any test: test(alpha, beta) returns a fail-soft
// bound on the score or, inside the window, the score.
func mtdSteps(lo, up, guess int, test func(alpha, beta int) int) int {
	var failedHigh, failedLow bool
	for {
		guess = min(max(guess, lo), up)
		v := test(guess-1, guess+1)
		switch {
		case v > guess:
			lo, failedHigh = max(v, guess+2), true
			guess = lo
		case v < guess:
			up, failedLow = min(v, guess-2), true
			guess = up
		default:
			return v
		}
		if lo >= up {
			return lo
		}
		if failedHigh && failedLow {
			guess = (lo + up) / 2
			guess -= guess & 1 // an even score, within [lo, up]
		}
	}
}

// mid is a depth-limited alpha-beta search with the evaluation at its
// leaves, in evalScale units; its nodes count as the solve's.
func (s *Solver) mid(own, opp uint64, alpha, beta, depth, empties int, passed bool) int {
	g := s.g
	if depth == 0 {
		return g.eval(own, opp)
	}
	if s.nodes >= s.pollAt {
		s.poll()
	}
	s.nodes++
	empty := g.mask &^ (own | opp)
	legal := moves(own, opp, empty)
	if legal == 0 {
		if passed {
			return evalScale * g.score(own, opp)
		}
		return -s.mid(opp, own, -beta, -alpha, depth, empties, true)
	}
	ml := &s.lists[empties]
	s.midOrder(ml, own, opp, legal, empty)
	best := -probeInf - 1
	for i := 0; i < ml.n; i++ {
		m := &ml.mv[i]
		x := uint64(1) << uint(m.sq)
		v := -s.mid(opp&^m.flip, own|m.flip|x, -beta, -alpha, depth-1, empties-1, false)
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

// midOrder fills ml with the legal moves for mid, fewest weighted replies
// first.
func (s *Solver) midOrder(ml *moveList, own, opp, legal, empty uint64) {
	g := s.g
	ml.n = 0
	for m := legal; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		x := uint64(1) << uint(sq)
		f := flips(sq, own, opp)
		replies := moves(opp&^f, own|f|x, empty&^x)
		ml.insert(move{sq: sq, flip: f, key: bits.OnesCount64(replies) + bits.OnesCount64(replies&g.corners)})
	}
}

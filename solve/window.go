package solve

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
)

// A caller that needs only part of the truth about a position (is it
// better than a score a sibling already reached, who wins) asks for a
// window: scores outside it need only be bounded, and a narrow window
// prunes far more than the full one.

// Bounds is what a windowed solve proved: the position's score for the
// side to move lies in [Lower, Upper], and is exact when they are equal.
type Bounds struct {
	Lower, Upper int
	// Nodes counts the positions searched.
	Nodes int64
}

// Exact reports whether the bounds pin the score down.
func (r Bounds) Exact() bool { return r.Lower == r.Upper }

// SolveWindow bounds p's score for the side to move on b: exact when it
// lies strictly between alpha and beta, else at most alpha (an upper
// bound) or at least beta (a lower bound), each bound as tight as the
// search found. alpha must be below beta; either may lie beyond the
// board's scores, and a window holding every score solves exactly. It
// stops as SolveContext does.
func (s *Solver) SolveWindow(ctx context.Context, b *board.Board, p board.Position, alpha, beta int) (Bounds, error) {
	if alpha >= beta {
		return Bounds{}, fmt.Errorf("%w: window (%d, %d) is empty", ErrOptions, alpha, beta)
	}
	squares := b.Size() * b.Size()
	if alpha < -squares && beta > squares {
		res, err := s.SolveContext(ctx, b, p)
		return Bounds{Lower: res.Score, Upper: res.Score, Nodes: res.Nodes}, err
	}
	if err := b.Valid(p); err != nil {
		return Bounds{}, fmt.Errorf("solve: %w", err)
	}
	g := geometries[b.Size()]
	if s.g != g {
		s.g = g
		s.tt.clear()
	}
	s.tt.newSearch()
	// Threads help only a solve's root; a windowed solve runs on this
	// goroutine alone.
	s.ctx, s.pollAt, s.nodes, s.polled = ctx, 0, 0, 0
	par := s.par
	s.par = nil
	defer func() { s.par, s.ctx = par, nil }()
	var r Bounds
	err := s.guarded(func() { r = s.window(p.Mover(), p.Opponent(), alpha, beta, squares-p.Discs()) })
	r.Nodes = s.nodes
	if err != nil {
		return Bounds{Nodes: s.nodes}, err
	}
	return r, nil
}

// guarded runs a search and turns a stop (see stopped) into its error.
func (s *Solver) guarded(search func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			st, ok := r.(stopped)
			if !ok {
				panic(r)
			}
			err = st.err
		}
	}()
	s.poll()
	search()
	return nil
}

// window is SolveWindow's search. A window of at most three scores (two
// of them even) is one fail-soft search. A wider one first asks, with a
// null window at each finite edge, whether the score lies outside; inside,
// the narrow tests of mtd find it, from the evaluation's guess.
func (s *Solver) window(own, opp uint64, alpha, beta, empties int) Bounds {
	g := s.g
	alpha, beta = max(alpha, -g.squares-1), min(beta, g.squares+1)
	if beta-alpha <= 2 {
		v := s.search(own, opp, alpha, beta, empties)
		switch {
		case v <= alpha:
			return Bounds{Lower: -g.squares, Upper: v}
		case v >= beta:
			return Bounds{Lower: v, Upper: g.squares}
		}
		return Bounds{Lower: v, Upper: v}
	}
	lo, up := -g.squares, g.squares
	if alpha >= -g.squares {
		v := s.search(own, opp, alpha, alpha+1, empties)
		if v <= alpha {
			return Bounds{Lower: lo, Upper: v}
		}
		lo = v
	}
	if beta <= g.squares {
		v := s.search(own, opp, beta-1, beta, empties)
		if v >= beta {
			return Bounds{Lower: v, Upper: up}
		}
		up = v
	}
	// Scores are even: the bounds found so far round inwards to even.
	lo += lo & 1
	up -= up & 1
	v := s.mtd(own, opp, empties, lo, up, s.guess(own, opp, empties))
	return Bounds{Lower: v, Upper: v}
}

// Estimate guesses p's score for the side to move on b, without solving
// it: a depth-plies search with the evaluation at its leaves (the guess
// that starts the solver's own narrow tests), for ordering work among
// positions. It never fails on a valid position; a depth above the
// empty squares searches to the end.
func (s *Solver) Estimate(b *board.Board, p board.Position, depth int) (int, error) {
	if err := b.Valid(p); err != nil {
		return 0, fmt.Errorf("solve: %w", err)
	}
	g := geometries[b.Size()]
	if s.g != g {
		s.g = g
		s.tt.clear()
	}
	s.ctx, s.pollAt, s.nodes, s.polled = context.Background(), 0, 0, 0
	par := s.par
	s.par = nil
	defer func() { s.par, s.ctx = par, nil }()
	empties := g.squares - p.Discs()
	var v int
	err := s.guarded(func() {
		v = s.mid(p.Mover(), p.Opponent(), -probeInf, probeInf, max(min(depth, empties), 1), empties, false)
	})
	if err != nil {
		return 0, err
	}
	return (v+evalScale*(g.squares+1))/(2*evalScale)*2 - g.squares, nil
}

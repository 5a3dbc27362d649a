package solve

import (
	"math/bits"
	"math/rand"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// brute is plain minimax over board's own rules (Play folds passes), an
// implementation independent of the solver's move generator and search.
func brute(b *board.Board, p board.Position) (int, []int) {
	legal := b.Moves(p)
	if legal == 0 {
		q := p
		q.Side = p.Side.Opponent()
		if b.Moves(q) == 0 {
			own, opp := bits.OnesCount64(p.Mover()), bits.OnesCount64(p.Opponent())
			empty := b.Size()*b.Size() - own - opp
			switch {
			case own > opp:
				return own - opp + empty, nil
			case own < opp:
				return own - opp - empty, nil
			}
			return 0, nil
		}
		v, _ := brute(b, q)
		return -v, nil
	}
	return bestChildren(b, p, func(q board.Position) int {
		v, _ := brute(b, q)
		return v
	})
}

// bestChildren returns the best score of p's moves and every move that
// achieves it, given the score of each child for its own side to move
// (Play folds passes, so a child may have p's side to move).
func bestChildren(b *board.Board, p board.Position, score func(q board.Position) int) (int, []int) {
	best := -100
	var moves []int
	for m := b.Moves(p); m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		q, err := b.Play(p, sq)
		if err != nil {
			panic(err)
		}
		v := score(q)
		if q.Side != p.Side {
			v = -v
		}
		switch {
		case v > best:
			best, moves = v, []int{sq}
		case v == best:
			moves = append(moves, sq)
		}
	}
	return best, moves
}

// randomPosition plays random moves from the start until at most empties
// squares are empty or the game ends.
func randomPosition(b *board.Board, rng *rand.Rand, empties int) board.Position {
	p := b.Start()
	for b.Size()*b.Size()-p.Discs() > empties && !b.Terminal(p) {
		legal := b.Moves(p)
		for k := rng.Intn(bits.OnesCount64(legal)); k > 0; k-- {
			legal &= legal - 1
		}
		p, _ = b.Play(p, bits.TrailingZeros64(legal))
	}
	return p
}

// checkAgainstBrute solves p with s and with brute and compares the score
// and the set of best moves.
func checkAgainstBrute(t *testing.T, s *Solver, b *board.Board, p board.Position) {
	t.Helper()
	got, err := s.Solve(b, p)
	if err != nil {
		t.Fatalf("Solve(%s): %v", p.Text(), err)
	}
	score, best := brute(b, p)
	if got.Score != score || !slices.Equal(got.BestMoves, best) {
		t.Fatalf("%dx%d %s:\n%s solver: %+d %v, brute force: %+d %v",
			b.Size(), b.Size(), p.Text(), b.Diagram(p), got.Score, got.BestMoves, score, best)
	}
}

func newSolver(t testing.TB, bytes int) *Solver {
	return newSolverOpts(t, Options{TableBytes: bytes})
}

func newSolverOpts(t testing.TB, o Options) *Solver {
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStart4x4(t *testing.T) {
	b := board.MustNew(4)
	got, err := Solve(b, b.Start(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Perfect play from the 4x4 start ends 3-11 for white with 2 empties,
	// which go to white: -10 for black, the side to move.
	if got.Score != -10 {
		t.Errorf("4x4 start: score %+d, want -10", got.Score)
	}
	checkAgainstBrute(t, newSolver(t, 1<<16), b, b.Start())
}

// TestWholeGame4x4 solves every position along many random 4x4 games, from
// the start to the end, with one solver whose small table is shared by all.
func TestWholeGame4x4(t *testing.T) {
	b := board.MustNew(4)
	s := newSolver(t, 1<<12)
	rng := rand.New(rand.NewSource(1))
	for range 10 {
		for e := 12; e >= 0; e-- {
			checkAgainstBrute(t, s, b, randomPosition(b, rng, e))
		}
	}
}

func TestRandomPositions(t *testing.T) {
	for _, tc := range []struct {
		size, empties, n int
	}{
		{6, 4, 300}, {6, 8, 100}, {6, 10, 10}, {8, 4, 300}, {8, 7, 200}, {8, 9, 10},
	} {
		b := board.MustNew(tc.size)
		s := newSolver(t, 1<<16)
		rng := rand.New(rand.NewSource(int64(tc.size*100 + tc.empties)))
		for range tc.n {
			checkAgainstBrute(t, s, b, randomPosition(b, rng, tc.empties))
		}
	}
}

// TestTwins: the four moves of a start lead to one position up to
// symmetry, so three of them are twins of the first; a position without
// symmetry has none.
func TestTwins(t *testing.T) {
	for _, tc := range []struct {
		size, moves, twins int
	}{
		{4, 0, 3}, {6, 0, 3}, {8, 0, 3}, {8, 1, 0},
	} {
		b := board.MustNew(tc.size)
		p := b.Start()
		for range tc.moves {
			p, _ = b.Play(p, bits.TrailingZeros64(b.Moves(p)))
		}
		s := newSolver(t, 1<<16)
		s.g = geometries[tc.size]
		ml := &s.lists[0]
		g := s.g
		own, opp := p.Mover(), p.Opponent()
		empty := g.mask &^ p.Occ
		s.order(ml, own, opp, moves(own, opp, empty), empty, 0)
		n := 0
		for _, tw := range twins(b, p, ml) {
			if tw >= 0 {
				n++
			}
		}
		if n != tc.twins {
			t.Errorf("%dx%d after %d moves: %d twins, want %d", tc.size, tc.size, tc.moves, n, tc.twins)
		}
	}
}

// TestRootAgainstChildren checks the root's search (its ordering by
// guesses from rootOrderMin empties, its tests of every move, the ties
// it lists) against solving each child on its own, on 8x8 positions with
// more empties than brute force reaches.
func TestRootAgainstChildren(t *testing.T) {
	b := board.MustNew(8)
	rng := rand.New(rand.NewSource(16))
	s := newSolver(t, 1<<22)
	for _, empties := range []int{rootOrderMin, rootOrderMin, rootOrderMin + 1} {
		p := randomPosition(b, rng, empties)
		if b.Moves(p) == 0 {
			continue
		}
		got, err := s.Solve(b, p)
		if err != nil {
			t.Fatal(err)
		}
		score, best := bestChildren(b, p, func(q board.Position) int {
			res, err := newSolver(t, 1<<22).Solve(b, q)
			if err != nil {
				t.Fatal(err)
			}
			return res.Score
		})
		if got.Score != score || !slices.Equal(got.BestMoves, best) {
			t.Errorf("%s:\n%s root: %+d %v, children: %+d %v", p.Text(), b.Diagram(p), got.Score, got.BestMoves, score, best)
		}
	}
}

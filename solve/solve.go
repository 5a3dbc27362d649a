// Package solve is an exact Reversi endgame solver for the 4x4, 6x6 and 8x8
// boards of package board: it returns a position's final disc differential
// under perfect play and every move that achieves it.
//
// Scores follow the usual tournament rule: when neither side can move the
// game ends, and empty squares go to the winner (a draw splits nothing), so
// a score is the winner's disc count minus the loser's. A side with no
// legal move passes.
//
// The search is negamax alpha-beta with principal variation search and
// null-window re-searches. The root is solved by tests of narrow windows
// around a guess from a shallow search with the evaluation (MTD(f)-like),
// each test trying every root move, best guesses first. Moves are ordered
// fastest first (fewest replies for the opponent) with the transposition
// table's move searched before any ordering, high in the tree also by a
// shallow search with an evaluation fitted to solved positions (patterns
// on 8x8, pattern.go), parity ordering near the end; a bounded
// transposition table, enhanced transposition cutoffs, stability cutoffs,
// and code of its own for the last four empty squares. Options.Threads
// lets several goroutines search one position, sharing the table.
package solve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/reversi-cloud/reversi/board"
)

// DefaultTableBytes is the transposition table size when Options leaves it
// zero.
const DefaultTableBytes = 32 << 20

// maxThreads bounds Options.Threads: far more than the cores of any
// machine this runs on.
const maxThreads = 256

// maxTableBytes bounds Options.TableBytes: larger tables stop paying on
// this machine and usually mean a unit mistake.
const maxTableBytes = 16 << 30

// Options configure a Solver. The zero value is valid.
type Options struct {
	// TableBytes bounds the memory of the transposition table (rounded
	// down to a power of two 64-byte buckets of two entries). 0 means
	// DefaultTableBytes.
	TableBytes int
	// MaxNodes stops a solve that has searched this many nodes (it may
	// overshoot by a few thousand a thread) with ErrNodeLimit. 0 means no
	// limit.
	MaxNodes int64
	// OneBestMove makes Result.BestMoves hold one best move instead of
	// all: the root's later moves need only be proved no better, not
	// compared with the best.
	OneBestMove bool
	// Threads is how many goroutines search each position together,
	// sharing the table: more than one makes node counts vary from run to
	// run (never scores). 0 means 1.
	Threads int
	// Cores, when set, holds back the Threads-1 helpers of each solve
	// until Cores has an idle CPU for each: the threads of several
	// Solvers then never outnumber the CPUs (see Cores). Nil: the helpers
	// start with every solve.
	Cores *Cores
}

// ErrOptions reports invalid Options.
var ErrOptions = errors.New("solve: invalid options")

// ErrNodeLimit reports a solve stopped by Options.MaxNodes.
var ErrNodeLimit = errors.New("solve: node limit reached")

// pollNodes is how often, in nodes, a search looks at its context and its
// node budget: about a millisecond of search.
const pollNodes = 1 << 13

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxNodes < 0:
		return o, fmt.Errorf("%w: MaxNodes %d is negative", ErrOptions, o.MaxNodes)
	case o.TableBytes < 0:
		return o, fmt.Errorf("%w: TableBytes %d is negative", ErrOptions, o.TableBytes)
	case o.TableBytes > maxTableBytes:
		return o, fmt.Errorf("%w: TableBytes %d is above %d", ErrOptions, o.TableBytes, maxTableBytes)
	case o.Threads < 0:
		return o, fmt.Errorf("%w: Threads %d is negative", ErrOptions, o.Threads)
	case o.Threads > maxThreads:
		return o, fmt.Errorf("%w: Threads %d is above %d", ErrOptions, o.Threads, maxThreads)
	}
	if o.TableBytes == 0 {
		o.TableBytes = DefaultTableBytes
	}
	if o.Threads == 0 {
		o.Threads = 1
	}
	return o, nil
}

// Result is the solution of one position.
type Result struct {
	// Score is the final disc differential for the side to move under
	// perfect play, empty squares going to the winner.
	Score int
	// BestMoves lists every move that achieves Score (only the first found
	// with Options.OneBestMove), as board square indices (board.SquareName
	// names them), ascending. It is empty when
	// the side to move has no legal move: it must pass, or the game is
	// over (board.Terminal tells which).
	BestMoves []int
	// Nodes counts the positions searched (also when a solve is stopped).
	Nodes int64
}

// Solver solves positions. Its transposition table persists from one
// Solve to the next (entries are facts about positions, so later solves of
// related positions reuse them) and is cleared when the board size
// changes. A Solver is not safe for concurrent use (Options.Threads makes
// one solve use several goroutines): give each goroutine its own, or call
// the package-level Solve.
type Solver struct {
	tt       *table
	g        *geometry
	nodes    int64
	maxNodes int64
	oneBest  bool // Options.OneBestMove
	// ctx is the context of the running solve; at pollAt nodes the search
	// looks at it and at the node budget.
	ctx    context.Context
	pollAt int64
	// lists[e] is the move list of the position being searched with e
	// empties: one per depth, reused rather than zeroed on every call.
	lists [65]moveList
	// par is shared by the threads of a solve with Options.Threads above
	// 1, nil otherwise; polled counts the nodes already added to it.
	par    *parallel
	polled int64
	// helpers search the same positions on goroutines of their own,
	// sharing tt and par, each once it has an idle CPU of cores if cores
	// is set.
	helpers []*Solver
	cores   *Cores
}

// New returns a Solver with a transposition table of opts.TableBytes.
func New(opts Options) (*Solver, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Solver{tt: newTable(opts.TableBytes), maxNodes: opts.MaxNodes, oneBest: opts.OneBestMove, cores: opts.Cores}
	if opts.Threads > 1 {
		s.par = newParallel()
		for range opts.Threads - 1 {
			s.helpers = append(s.helpers, &Solver{tt: s.tt, maxNodes: opts.MaxNodes, oneBest: opts.OneBestMove, par: s.par})
		}
	}
	return s, nil
}

// Solve solves p on b with a Solver of its own: safe for concurrent use,
// at the cost of allocating a transposition table per call (size it with
// opts.TableBytes; small positions need little), freed on return.
func Solve(b *board.Board, p board.Position, opts Options) (Result, error) {
	s, err := New(opts)
	if err != nil {
		return Result{}, err
	}
	defer s.tt.release()
	return s.Solve(b, p)
}

// Solve returns p's exact score and best moves on b.
func (s *Solver) Solve(b *board.Board, p board.Position) (Result, error) {
	return s.SolveContext(context.Background(), b, p)
}

// stopped unwinds a search that must stop: the search panics with it at a
// poll and SolveContext recovers it, so the hot recursion carries no
// error results. Whatever the table learnt before stays true.
type stopped struct{ err error }

// SolveContext is Solve, stopped with ctx's error when ctx is done and with
// ErrNodeLimit when the node budget is spent; the Result then holds only
// Nodes. The Solver remains usable.
func (s *Solver) SolveContext(ctx context.Context, b *board.Board, p board.Position) (Result, error) {
	if err := b.Valid(p); err != nil {
		return Result{}, fmt.Errorf("solve: %w", err)
	}
	g := geometries[b.Size()]
	if s.g != g {
		// A new Solver's table is zeroed memory, which reads as empty:
		// clearing it would only make the system back every page of it at
		// once, however little the first solves use.
		if s.g != nil {
			s.tt.clear()
		}
		s.g = g
	}
	s.tt.newSearch()
	if s.par == nil {
		return s.run(ctx, b, p)
	}
	// The helpers search the same position and fill the table; only this
	// Solver's answer counts, and when it has one the helpers stop. A
	// helper that joins late starts from the root like the others: the
	// table soon brings it to where they are.
	s.par.reset()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, h := range s.helpers {
		h.g, h.nodes = g, 0
		wg.Go(func() {
			if s.cores != nil {
				if !s.cores.take(ctx, done) {
					return
				}
				defer s.cores.Free()
			}
			h.run(ctx, b, p)
		})
	}
	res, err := s.run(ctx, b, p)
	s.par.stop.Store(true)
	close(done)
	wg.Wait()
	for _, h := range s.helpers {
		res.Nodes += h.nodes
	}
	return res, err
}

// run searches p on the calling goroutine.
func (s *Solver) run(ctx context.Context, b *board.Board, p board.Position) (res Result, err error) {
	s.ctx, s.pollAt, s.nodes, s.polled = ctx, 0, 0, 0
	defer func() {
		s.ctx = nil
		if r := recover(); r != nil {
			st, ok := r.(stopped)
			if !ok {
				panic(r)
			}
			res, err = Result{Nodes: s.nodes}, st.err
		}
	}()
	s.poll()
	return s.solve(b, p), nil
}

// errHelperDone stops a helper once the solve has its answer.
var errHelperDone = errors.New("solve: answer found by another thread")

// poll stops the search when its context is done, its node budget (shared
// by the threads) spent or, in a helper, the solve answered; and sets when
// to look again.
func (s *Solver) poll() {
	total := s.nodes
	if s.par != nil {
		total = s.par.nodes.Add(s.nodes - s.polled)
		s.polled = s.nodes
		if s.par.stop.Load() {
			panic(stopped{errHelperDone})
		}
	}
	if err := s.ctx.Err(); err != nil {
		panic(stopped{fmt.Errorf("solve: %w", err)})
	}
	s.pollAt = s.nodes + pollNodes
	if s.maxNodes > 0 {
		if total >= s.maxNodes {
			panic(stopped{ErrNodeLimit})
		}
		s.pollAt = min(s.pollAt, s.nodes+s.maxNodes-total)
	}
}

// solve is SolveContext's search, for a valid position.
func (s *Solver) solve(b *board.Board, p board.Position) Result {
	g := s.g
	own, opp := p.Mover(), p.Opponent()
	empties := g.squares - p.Discs()
	empty := g.mask &^ p.Occ
	legal := moves(own, opp, empty)
	if legal == 0 {
		score := s.search(own, opp, -g.squares, g.squares, empties)
		return Result{Score: score, Nodes: s.nodes}
	}
	s.nodes++
	hint := -1
	if e, ok := s.tt.probe(own, opp); ok {
		hint = int(e.move) // from an earlier solve
	}
	ml := &s.lists[empties]
	s.order(ml, own, opp, legal, empty, empties)
	guess := s.rootOrder(ml, own, opp, hint, empties)
	twin := twins(b, p, ml)
	var skip uint64 // moves that score as their twin does
	for sq, t := range twin {
		if t >= 0 {
			skip |= 1 << uint(sq)
		}
	}
	score, first := s.rootScore(ml, skip, own, opp, empties, guess)
	best := []int{first}
	if !s.oneBest {
		// Does another move tie? Scores are even (twice one side's discs
		// minus the squares, or 0), so the window (score-1, score+1)
		// answers in one search: it returns score on a tie.
		for i := 0; i < ml.n; i++ {
			m := &ml.mv[i]
			x := uint64(1) << uint(m.sq)
			if m.sq == first || skip&x != 0 {
				continue
			}
			if -s.search(opp&^m.flip, own|m.flip|x, -score-1, -score+1, empties-1) == score {
				best = append(best, m.sq)
			}
		}
	}
	if !s.oneBest {
		for sq, t := range twin {
			if t >= 0 && slices.Contains(best, t) {
				best = append(best, sq)
			}
		}
	}
	sortInts(best)
	return Result{Score: score, BestMoves: best, Nodes: s.nodes}
}

// rootOrderMin: roots with at least this many empties order their moves
// by each move's guessed score.
const rootOrderMin = 16

// rootOrder returns a guess of the root's score (see guess) and, at
// rootOrderMin empties or more, sorts ml by each move's estimate, the
// table's move still first: a first move that is not the best makes every
// later move's test of the score harder. The guess is that of the first
// move below rootOrderMin, else the best move's.
func (s *Solver) rootOrder(ml *moveList, own, opp uint64, hint, empties int) (guess int) {
	if empties < rootOrderMin {
		ml.toFront(hint)
		m := &ml.mv[0]
		x := uint64(1) << uint(m.sq)
		return -s.guess(opp&^m.flip, own|m.flip|x, empties-1)
	}
	mv := ml.mv[:ml.n]
	best := probeInf // the best (lowest) estimate for the opponent
	for i := range mv {
		m := &mv[i]
		x := uint64(1) << uint(m.sq)
		m.key = s.estimate(opp&^m.flip, own|m.flip|x, empties-1)
		best = min(best, m.key)
		if m.sq == hint {
			m.key = -probeInf
		}
	}
	slices.SortStableFunc(mv, func(a, b move) int { return a.key - b.key })
	return -s.g.evenScore(best)
}

// rootScore returns the exact score of the root, own to move against opp
// with the moves ml but those of skip, and a move that achieves it. It
// tests the whole root against scores, starting from guess (an MTD(f)
// driver at the root): solving the first move exactly and then proving
// the others no better costs a second exact solve whenever the first is
// not the best, and a test only needs each move's score on one side of
// it. The move that reaches a test's bound goes first in the next test.
func (s *Solver) rootScore(ml *moveList, skip, own, opp uint64, empties, guess int) (score, first int) {
	g := s.g
	first = -1
	score = mtdSteps(-g.squares, g.squares, guess, func(alpha, beta int) int {
		v, sq := s.searchList(ml, skip, own, opp, alpha, beta, empties, -g.squares-1, -1, 0)
		if v > alpha {
			first = sq
			ml.toFront(sq)
		}
		return v
	})
	if first < 0 {
		// No test reached a lower bound: every move scores -squares.
		for i := 0; i < ml.n; i++ {
			if sq := ml.mv[i].sq; skip>>uint(sq)&1 == 0 {
				return score, sq
			}
		}
	}
	return score, first
}

// twins maps each root move of ml to an earlier move of ml that leads to
// the same position up to the board's symmetries (so to the same score),
// or to -1: a symmetric position, such as a start, has moves that need
// no search of their own.
func twins(b *board.Board, p board.Position, ml *moveList) [64]int {
	var twin [64]int
	for i := range twin {
		twin[i] = -1
	}
	var seen [64]board.Position
	for i := 0; i < ml.n; i++ {
		sq := ml.mv[i].sq
		q, err := b.Play(p, sq)
		if err != nil {
			continue // a move of ml is legal: Play does not fail
		}
		seen[i] = b.Canonical(q)
		for j := range i {
			if seen[j] == seen[i] {
				twin[sq] = ml.mv[j].sq
				break
			}
		}
	}
	return twin
}

// sortInts sorts a handful of squares in place.
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j-1] > a[j]; j-- {
			a[j-1], a[j] = a[j], a[j-1]
		}
	}
}

package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
	"github.com/reversi-cloud/reversi/task"
)

// FrontierState is what a pruned solve (solve mode root or wld) did with
// a position of the target ply where the game goes on, given its score:
// "solved", "bounded" or "skipped".
func FrontierState(s backtrack.Score) string {
	switch {
	case s.Exact:
		return "solved"
	case s.Bounded:
		return "bounded"
	}
	return "skipped"
}

// ErrNotInRun reports a position that a run never reached: beyond its
// target ply, in a ply not enumerated yet, or not reachable at all.
var ErrNotInRun = errors.New("position not in the run")

// PositionInfo is what a run knows about one position.
type PositionInfo struct {
	Position  board.Position // as asked, in its own orientation
	Canonical board.Position // the image the run stores
	Ply       int
	Resolved  bool         // the ply's results are known
	Result    board.Result // meaningful when Resolved
	Score     backtrack.Score
	// Parents are its canonical parents, in key order: from the
	// backtracking rows, or, where its ply keeps none for it
	// (runstore.Ply.TerminalSources), the positions of the ply before
	// that one move undone leads to (board.Parents).
	Parents []board.Position
	// ParentsUndone says Parents came from undoing a move, its ply
	// keeping no backtracking rows for it.
	ParentsUndone bool
	Children      []ChildInfo // one per distinct canonical child, in move order
	// Frontier says, for a position of the target ply of a run in the
	// solve mode root or wld, what the solving did with it: "solved"
	// (an exact score), "bounded" (Score holds bounds) or "skipped" (its
	// parents were settled without it); "" elsewhere and where the game
	// is over.
	Frontier string
	// solved holds the best moves the solver found, for a solved position
	// of the target ply: its children are beyond the run.
	solved []string
}

// ChildInfo is one distinct child of a position.
type ChildInfo struct {
	Moves     []string // the moves from the asked orientation that reach it
	Canonical board.Position
	InRun     bool // false when the run stops before the child's ply
	Resolved  bool
	Result    board.Result
	Score     backtrack.Score
}

// Lookup finds a position in the run with its result, its parents and its
// children. It reads a few blobs whole, so it is a tool for people, not
// for the workers. A position the run does not hold gives ErrNotInRun.
func (r *Run) Lookup(ctx context.Context, p board.Position) (*PositionInfo, error) {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	if err := r.Board.Valid(p); err != nil {
		return nil, err
	}
	l := &lookup{run: r, plies: map[int]*runstore.Ply{}, finals: map[int][]runstore.FinalBlob{}, keys: map[string][]board.Position{}, results: map[string][]uint16{}}
	info := &PositionInfo{Position: p, Canonical: r.Board.Canonical(p), Ply: r.Ply(p)}
	at, err := l.find(ctx, info.Canonical)
	if err != nil {
		return nil, err
	}
	info.Resolved, info.Result, info.Score, err = l.result(ctx, at)
	if err != nil {
		return nil, err
	}
	if info.Parents, info.ParentsUndone, err = l.parents(ctx, at); err != nil {
		return nil, err
	}
	if info.Resolved && info.Ply == r.Config.Target && r.Config.SolveMode.Pruned() && !r.Board.Terminal(p) {
		info.Frontier = FrontierState(info.Score)
	}
	// The best moves of a solved position of the target ply; a bounded
	// or skipped one would need a whole solve, which the run spared.
	if info.Resolved && info.Ply == r.Config.Target && r.Config.Solve && !r.Board.Terminal(p) && info.Score.Exact {
		res, err := solve.Solve(r.Board, p, solve.Options{})
		if err != nil {
			return nil, err
		}
		for _, sq := range res.BestMoves {
			info.solved = append(info.solved, r.Board.SquareName(sq))
		}
	}
	byChild := map[board.Position]int{}
	for m := r.Board.Moves(p); m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		q, err := r.Board.Play(p, sq)
		if err != nil {
			return nil, err
		}
		c := r.Board.Canonical(q)
		if k, ok := byChild[c]; ok {
			info.Children[k].Moves = append(info.Children[k].Moves, r.Board.SquareName(sq))
			continue
		}
		byChild[c] = len(info.Children)
		ci := ChildInfo{Moves: []string{r.Board.SquareName(sq)}, Canonical: c}
		cat, err := l.find(ctx, c)
		switch {
		case errors.Is(err, ErrNotInRun):
		case err != nil:
			return nil, err
		default:
			ci.InRun = true
			if ci.Resolved, ci.Result, ci.Score, err = l.result(ctx, cat); err != nil {
				return nil, err
			}
		}
		info.Children = append(info.Children, ci)
	}
	return info, nil
}

// BestMoves names the moves that achieve the position's value. With an
// exact score, those whose children have the same score (or, at a solved
// target ply, those the solver found), also when the position is lost;
// otherwise, for a won position the winning moves, for a draw the drawing
// ones. It is empty for a lost position without a score, an unknown one,
// and one without moves.
func (info *PositionInfo) BestMoves() []string {
	if !info.Resolved || info.Result == board.Unknown {
		return nil
	}
	if info.solved != nil {
		return info.solved
	}
	var out []string
	for _, c := range info.Children {
		switch {
		case !c.Resolved:
		case info.Score.Exact:
			if c.Score.Exact && c.Score.Diff == info.Score.Diff {
				out = append(out, c.Moves...)
			}
		case c.Result == info.Result && info.Result != board.WinFor(info.Position.Side.Opponent()):
			out = append(out, c.Moves...)
		}
	}
	return out
}

// lookup caches what one Lookup reads.
type lookup struct {
	run     *Run
	plies   map[int]*runstore.Ply
	finals  map[int][]runstore.FinalBlob
	keys    map[string][]board.Position
	results map[string][]uint16 // by results blob name
}

// location is where a canonical position sits: ply, final blob, index.
type location struct {
	ply   *runstore.Ply
	final runstore.FinalBlob
	index int
}

// ply reads a Final (or later) ply and its final blobs.
func (l *lookup) ply(ctx context.Context, n int) (*runstore.Ply, error) {
	if p, ok := l.plies[n]; ok {
		return p, nil
	}
	if n < 0 || n > l.run.Config.Target {
		return nil, fmt.Errorf("%w: ply %d is outside the run's plies 0 to %d", ErrNotInRun, n, l.run.Config.Target)
	}
	p, err := l.run.store.Ply(ctx, n)
	if errors.Is(err, runstore.ErrNoPly) {
		return nil, fmt.Errorf("%w: ply %d has not been reached yet", ErrNotInRun, n)
	}
	if err != nil {
		return nil, err
	}
	if !p.State.AtLeast(runstore.Dispatched) { // its final blob rows are all written
		return nil, fmt.Errorf("%w: ply %d is still being enumerated", ErrNotInRun, n)
	}
	if l.finals[n], err = l.run.store.Finals(ctx, n); err != nil {
		return nil, err
	}
	l.plies[n] = p
	return p, nil
}

// undoneParents finds the parents of c without backtracking rows: the
// positions one move undone leads to, which the ply before holds.
func (l *lookup) undoneParents(ctx context.Context, c board.Position) ([]board.Position, error) {
	var out []board.Position
	for _, q := range l.run.Board.Parents(c, nil) {
		_, err := l.find(ctx, q)
		switch {
		case errors.Is(err, ErrNotInRun):
		case err != nil:
			return nil, err
		default:
			out = append(out, q)
		}
	}
	slices.SortFunc(out, board.Compare)
	return out, nil
}

func (l *lookup) blobKeys(ctx context.Context, blob string) ([]board.Position, error) {
	if k, ok := l.keys[blob]; ok {
		return k, nil
	}
	k, err := l.run.shared.ReadKeys(ctx, blob)
	if err != nil {
		return nil, err
	}
	l.keys[blob] = k
	return k, nil
}

// find locates a canonical position: the final blobs of a ply are
// disjoint and in key order, so at most one can hold it.
func (l *lookup) find(ctx context.Context, c board.Position) (location, error) {
	n := l.run.Ply(c)
	p, err := l.ply(ctx, n)
	if err != nil {
		return location{}, err
	}
	finals := l.finals[n]
	j, _ := slices.BinarySearchFunc(finals, c, func(f runstore.FinalBlob, c board.Position) int {
		return board.Compare(f.Max, c)
	})
	if j < len(finals) && board.Compare(finals[j].Min, c) <= 0 {
		keys, err := l.blobKeys(ctx, finals[j].Blob)
		if err != nil {
			return location{}, err
		}
		if i, ok := slices.BinarySearchFunc(keys, c, board.Compare); ok {
			return location{ply: p, final: finals[j], index: i}, nil
		}
	}
	return location{}, fmt.Errorf("%w: ply %d holds no such position", ErrNotInRun, n)
}

func (l *lookup) result(ctx context.Context, at location) (bool, board.Result, backtrack.Score, error) {
	if !at.ply.State.AtLeast(runstore.Resolved) {
		return false, board.Unknown, backtrack.Score{}, nil
	}
	name := runstore.ResultsBlobName(at.ply.Ply, at.final.Index)
	words, ok := l.results[name]
	if !ok {
		var err error
		if words, err = backtrack.ReadResults(ctx, l.run.blobs, at.ply.Ply, at.final.Index); err != nil {
			return false, board.Unknown, backtrack.Score{}, err
		}
		l.results[name] = words
	}
	if at.index >= len(words) {
		return false, board.Unknown, backtrack.Score{}, fmt.Errorf("ply %d blob %d: %d results, none for position %d", at.ply.Ply, at.final.Index, len(words), at.index)
	}
	res, score := backtrack.FromWord(words[at.index], l.run.Board.Size()*l.run.Board.Size())
	return true, res, score, nil
}

// parents finds a position's parents, and whether they came from
// undoing a move rather than from the backtracking rows.
func (l *lookup) parents(ctx context.Context, at location) ([]board.Position, bool, error) {
	if at.ply.Ply == 0 {
		return nil, false, nil
	}
	index := at.index
	if at.ply.TerminalSources {
		keys, err := l.blobKeys(ctx, at.final.Blob)
		if err != nil {
			return nil, false, err
		}
		if !at.ply.KeepsSources(l.run.Board.Terminal(keys[at.index])) {
			parents, err := l.undoneParents(ctx, keys[at.index])
			return parents, true, err
		}
		// The rows skip the positions that keep none.
		index = 0
		for _, k := range keys[:at.index] {
			if at.ply.KeepsSources(l.run.Board.Terminal(k)) {
				index++
			}
		}
	}
	payload, err := l.run.store.Sources(ctx, at.final.Blob)
	if err != nil {
		return nil, false, err
	}
	sr := packed.NewSourceReader(bytes.NewReader(payload))
	var refs []backtrack.Ref
	for i := 0; i <= index; i++ {
		var ok bool
		if refs, ok = sr.Next(refs); !ok {
			return nil, false, fmt.Errorf("backtracking rows of %s end before position %d: %v", at.final.Blob, at.index, sr.Err())
		}
	}
	if _, err := l.ply(ctx, at.ply.Ply-1); err != nil {
		return nil, false, err
	}
	prev := l.finals[at.ply.Ply-1]
	var out []board.Position
	for _, ref := range refs {
		if int(ref.Blob) >= len(prev) {
			return nil, false, fmt.Errorf("a backtracking row names blob %d of ply %d, which has %d", ref.Blob, at.ply.Ply-1, len(prev))
		}
		keys, err := l.blobKeys(ctx, prev[ref.Blob].Blob)
		if err != nil {
			return nil, false, err
		}
		if int(ref.Index) >= len(keys) {
			return nil, false, fmt.Errorf("a backtracking row names position %d of %s, which has %d", ref.Index, prev[ref.Blob].Blob, len(keys))
		}
		out = append(out, keys[ref.Index])
	}
	return out, false, nil
}

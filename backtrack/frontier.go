package backtrack

import (
	"bytes"
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
	"github.com/reversi-cloud/reversi/task"
)

// frontier decides how far a resolve task of the target ply solves each
// position of its final blob in the solve modes root and wld: only as far
// as its parents still need. A parent needs a child only to learn whether
// the child beats the best its other children are known to reach for its
// side to move (root), or, in wld, whether the child wins where none is
// yet known to; a parent already won (wld) or at the best score the
// board allows (root) needs nothing, and a position none of whose
// parents needs anything is skipped. What the parents know comes from
// the notices other final blobs of this ply have sent so far, read again
// before each position, and from this task's own results.
//
// Crash points: nothing here writes. A retry may see more notices than
// the attempt it replaces and so bound or skip more, but every result it
// reports is a true bound, and a parent's need is judged only from
// results other tasks proved: notices this blob sent in an earlier
// attempt are left out, as the retry may skip the position they came
// from.
type frontier struct {
	run         *task.Run
	mode        runstore.SolveMode
	ply, index  int
	squares     int
	refs        [][]Ref             // each position's parents
	side        map[Ref]board.Color // each parent's side to move
	parentBlobs []uint32            // the parents' final blobs
	own         map[Ref]*Tally      // this task's results, by parent
	others      map[Ref]*Tally      // other blobs' notices, by parent
	counts      [frontierStates]int // positions by state
}

// frontierState is what a pruned solve did with a position.
type frontierState int

const (
	frontierSolved frontierState = iota
	frontierBounded
	frontierSkipped
	frontierOver // the game is over: nothing to solve
	frontierStates
)

// newFrontier reads the parents of the n positions of final blob index
// of ply (stored in blob) and their sides to move.
func newFrontier(ctx context.Context, run *task.Run, ply, index int, blob string, n int) (*frontier, error) {
	f := &frontier{run: run, mode: run.SolveMode, ply: ply, index: index, squares: run.Board.Size() * run.Board.Size(),
		side: map[Ref]board.Color{}, own: map[Ref]*Tally{}}
	if ply == 0 {
		f.refs = make([][]Ref, n)
		return f, nil
	}
	payload, err := run.Store.Sources(ctx, blob)
	if err != nil {
		return nil, err
	}
	sr := packed.NewSourceReader(bytes.NewReader(payload))
	byBlob := map[uint32][]uint32{}
	for i := range n {
		refs, ok := sr.Next(nil)
		if !ok {
			if sr.Err() != nil {
				return nil, fmt.Errorf("backtracking rows of %s: %w", blob, sr.Err())
			}
			return nil, fmt.Errorf("backtracking rows of %s cover %d of %d positions", blob, i, n)
		}
		f.refs = append(f.refs, refs)
		for _, r := range refs {
			if _, ok := byBlob[r.Blob]; !ok {
				f.parentBlobs = append(f.parentBlobs, r.Blob)
			}
			byBlob[r.Blob] = append(byBlob[r.Blob], r.Index)
		}
	}
	for _, pb := range f.parentBlobs {
		final, err := run.Store.Final(ctx, ply-1, int(pb))
		if err != nil {
			return nil, err
		}
		keys, err := run.ReadKeys(ctx, final.Blob)
		if err != nil {
			return nil, err
		}
		for _, i := range byBlob[pb] {
			if int(i) >= len(keys) {
				return nil, fmt.Errorf("backtracking rows of %s name position %d of %s, which has %d", blob, i, final.Blob, len(keys))
			}
			f.side[Ref{Blob: pb, Index: i}] = keys[i].Side
		}
	}
	return f, nil
}

// window returns the window, for p's side to move, that position i (p)
// of the blob must be solved in; need is false when no parent needs it.
func (f *frontier) window(ctx context.Context, i int, p board.Position) (alpha, beta int, need bool, err error) {
	inf := f.squares + 1
	if len(f.refs[i]) == 0 {
		// The start itself: the run's answer.
		if f.mode == runstore.SolveWLD {
			return -1, 1, true, nil
		}
		return -inf, inf, true, nil
	}
	if err := f.readNews(ctx); err != nil {
		return 0, 0, false, err
	}
	alpha, beta = inf, -inf // black minus white; empty until a parent needs p
	for _, r := range f.refs[i] {
		lower := -inf // the parent's best known, for its side to move
		for _, t := range [2]*Tally{f.own[r], f.others[r]} {
			if t != nil {
				lower = max(lower, t.Lower(f.squares))
			}
		}
		a, b, decided := lower, inf, lower >= f.squares
		if f.mode == runstore.SolveWLD {
			a, b, decided = max(lower, -1), 1, lower >= 1
		}
		if decided {
			continue // no child can change what the parent needs to know
		}
		if f.side[r] == board.White {
			a, b = -b, -a
		}
		alpha, beta = min(alpha, a), max(beta, b)
	}
	if alpha >= beta {
		return 0, 0, false, nil
	}
	if p.Side == board.White {
		alpha, beta = -beta, -alpha
	}
	return alpha, beta, true, nil
}

// readNews reads what the other final blobs of this ply have reported to
// the parents so far. A payload that does not decode (half written) is
// no news.
func (f *frontier) readNews(ctx context.Context) error {
	f.others = map[Ref]*Tally{}
	for _, pb := range f.parentBlobs {
		payloads, err := f.run.Store.NoticesFrom(ctx, f.ply-1, int(pb))
		if err != nil {
			return err
		}
		for child, payload := range payloads {
			if child == f.index {
				continue
			}
			var ns []Notice
			if DecodeNotices(payload, f.squares, func(n Notice) { ns = append(ns, n) }) != nil {
				continue
			}
			for _, n := range ns {
				r := Ref{Blob: pb, Index: n.Index}
				side, ok := f.side[r]
				if !ok {
					continue // a parent of none of this blob's positions
				}
				if f.others[r] == nil {
					f.others[r] = &Tally{}
				}
				f.others[r].Add(side, n)
			}
		}
	}
	return nil
}

// record counts position i's result and score into its parents' tallies
// and its state into the counts.
func (f *frontier) record(i int, res board.Result, s Score, state frontierState) {
	f.counts[state]++
	if s == (Score{}) && res == board.Unknown {
		return
	}
	for _, r := range f.refs[i] {
		if f.own[r] == nil {
			f.own[r] = &Tally{}
		}
		f.own[r].Add(f.side[r], Notice{Index: r.Index, Result: res, Score: s})
	}
}

// solve solves position i (p) of the blob as far as its parents need:
// its result and its score (exact, a bound, or unknown when skipped).
func (f *frontier) solve(ctx context.Context, s *solve.Solver, i int, p board.Position) (board.Result, Score, error) {
	alpha, beta, need, err := f.window(ctx, i, p)
	if err != nil {
		return board.Unknown, Score{}, err
	}
	if !need {
		f.record(i, board.Unknown, Score{}, frontierSkipped)
		return board.Unknown, Score{}, nil
	}
	r, err := s.SolveWindow(ctx, f.run.Board, p, alpha, beta)
	if err != nil {
		return board.Unknown, Score{}, err
	}
	lo, hi := r.Lower, r.Upper
	if p.Side == board.White {
		lo, hi = -hi, -lo
	}
	score := IntervalScore(lo, hi, f.squares)
	state := frontierBounded
	if score.Exact {
		state = frontierSolved
	}
	f.record(i, score.Result(), score, state)
	return score.Result(), score, nil
}

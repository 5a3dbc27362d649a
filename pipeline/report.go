package pipeline

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// DoneInfo describes a complete run.
type DoneInfo struct {
	Root string
	// Score is the start position's perfect-play final count, known
	// when every line of play was followed to the end of the game.
	Score *report.Score
	// RootScore is the start position's score under perfect play, black
	// minus white with empty squares to the winner: known when every line
	// was followed to the end of the game or solved.
	RootScore *int
}

// Done returns nil while the run is in progress.
func (r *Run) Done(ctx context.Context) (*DoneInfo, error) {
	d, err := r.store.RunDone(task.WithCategory(ctx, task.CategoryControl))
	if err != nil || d == nil {
		return nil, err
	}
	info := &DoneInfo{Root: d.Root}
	if d.ScoreBlack+d.ScoreWhite > 0 {
		info.Score = &report.Score{Black: int(d.ScoreBlack), White: int(d.ScoreWhite)}
	}
	if d.Scored {
		s := int(d.Score)
		info.RootScore = &s
	}
	return info, nil
}

// RecordStats stores one process's storage statistics, the CPU time it
// has used and the processor time it has held under its worker id, so
// reports can add up every process's transactions and compute.
func (r *Run) RecordStats(ctx context.Context, worker string, s runstore.WorkerStats) error {
	return r.store.PutWorkerStats(task.WithCategory(ctx, task.CategoryControl), worker, s)
}

// RecordedStats adds up what every process recorded.
func (r *Run) RecordedStats(ctx context.Context) (runstore.WorkerStats, error) {
	all, err := r.store.WorkerStats(task.WithCategory(ctx, task.CategoryControl))
	if err != nil {
		return runstore.WorkerStats{}, err
	}
	var sum runstore.WorkerStats
	for _, w := range all {
		sum = sum.Add(w)
	}
	return sum, nil
}

// Report reads the run's tables and summarises them, complete or not.
func (r *Run) Report(ctx context.Context) (*report.Report, error) {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	rep := &report.Report{Board: r.Config.Board, TargetPly: r.Config.Target, Engine: "pipeline", Run: r.Config.Name, Root: "unknown", Solve: r.Config.Solve}
	if r.Config.Start != r.Board.Start() {
		rep.Start = r.Config.Start.Text()
	}
	plies, err := r.store.Plies(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range plies {
		if !p.State.AtLeast(runstore.Final) {
			continue
		}
		row := report.Ply{Ply: p.Ply, Positions: p.Positions, Terminal: p.Terminal, Edges: p.Edges,
			Blobs: int64(p.Finals), Merges: p.Merges, Combines: p.Combines, BlobReads: p.BlobReads, MergedKeys: p.Merged}
		if p.State.AtLeast(runstore.Resolved) {
			row.BlackWins, row.WhiteWins, row.Draws, row.Unknown = p.Black, p.White, p.Draws, p.Unknown
		} else {
			row.Unknown = p.Positions
		}
		rep.Plies = append(rep.Plies, row)
	}
	done, err := r.Done(ctx)
	if err != nil {
		return nil, err
	}
	if done != nil {
		rep.Complete, rep.Root, rep.Score, rep.RootScore = true, done.Root, done.Score, done.RootScore
	}
	if r.Config.Solve {
		rep.SolveMode = string(r.Config.SolveMode)
	}
	targetResolved := false
	for _, p := range plies {
		targetResolved = targetResolved || p.Ply == r.Config.Target && p.State.AtLeast(runstore.Resolved)
	}
	if r.Config.SolveMode.Pruned() && targetResolved {
		f := &report.Frontier{}
		err := r.readResults(ctx, r.Config.Target, func(p board.Position, _ board.Result, s backtrack.Score) {
			if r.Board.Terminal(p) {
				f.Over++
				return
			}
			switch FrontierState(s) {
			case "solved":
				f.Solved++
			case "bounded":
				f.Bounded++
			default:
				f.Skipped++
			}
		})
		if err != nil {
			return nil, err
		}
		rep.Frontier = f
	}
	return rep, nil
}

// Results reads a resolved ply's positions and their results.
func (r *Run) Results(ctx context.Context, ply int) (map[board.Position]board.Result, error) {
	out := map[board.Position]board.Result{}
	err := r.readResults(ctx, ply, func(p board.Position, res board.Result, _ backtrack.Score) { out[p] = res })
	return out, err
}

// Scores reads a resolved ply's positions and their scores, unknown ones
// included.
func (r *Run) Scores(ctx context.Context, ply int) (map[board.Position]backtrack.Score, error) {
	out := map[board.Position]backtrack.Score{}
	err := r.readResults(ctx, ply, func(p board.Position, _ board.Result, s backtrack.Score) { out[p] = s })
	return out, err
}

// readResults calls fn with each position of a resolved ply, its result
// and its score.
func (r *Run) readResults(ctx context.Context, ply int, fn func(board.Position, board.Result, backtrack.Score)) error {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	p, err := r.store.Ply(ctx, ply)
	if err != nil {
		return err
	}
	if !p.State.AtLeast(runstore.Resolved) {
		return fmt.Errorf("ply %d is not resolved yet", ply)
	}
	finals, err := r.store.Finals(ctx, ply)
	if err != nil {
		return err
	}
	squares := r.Board.Size() * r.Board.Size()
	for _, f := range finals {
		keys, err := r.shared.ReadKeys(ctx, f.Blob)
		if err != nil {
			return err
		}
		res, err := backtrack.ReadResults(ctx, r.blobs, ply, f.Index)
		if err != nil {
			return err
		}
		if len(res) != len(keys) {
			return fmt.Errorf("ply %d blob %d: %d results for %d positions", ply, f.Index, len(res), len(keys))
		}
		for i, k := range keys {
			result, score := backtrack.FromWord(res[i], squares)
			fn(k, result, score)
		}
	}
	return nil
}

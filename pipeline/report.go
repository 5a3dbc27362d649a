package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage"
)

// DoneInfo describes a complete run.
type DoneInfo struct {
	Root string
	// Score is the start position's perfect-play final count, known
	// when every line of play was followed to the end of the game.
	Score *report.Score
}

// Done returns nil while the run is in progress.
func (r *Run) Done(ctx context.Context) (*DoneInfo, error) {
	ctx = withCategory(ctx, CategoryControl)
	e, err := r.state.Get(ctx, pkRun, rkDone)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading run state: %w", err)
	}
	d := &DoneInfo{Root: propStr(e, "Root")}
	if b, w := propInt(e, "ScoreBlack"), propInt(e, "ScoreWhite"); b+w > 0 {
		d.Score = &report.Score{Black: int(b), White: int(w)}
	}
	return d, nil
}

// RecordStats stores one process's storage statistics under its worker id,
// so reports can add up every process's transactions.
func (r *Run) RecordStats(ctx context.Context, worker string, s storage.Stats) error {
	ctx = withCategory(ctx, CategoryControl)
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = r.state.Upsert(ctx, storage.Entity{PartitionKey: pkStats, RowKey: worker, Props: map[string]any{"Stats": b}})
	if err != nil {
		return fmt.Errorf("recording worker statistics: %w", err)
	}
	return nil
}

// RecordedStats adds up the statistics every process recorded.
func (r *Run) RecordedStats(ctx context.Context) (storage.Stats, error) {
	ctx = withCategory(ctx, CategoryControl)
	es, err := queryAll(ctx, r.state, pkStats, "", "")
	if err != nil {
		return storage.Stats{}, err
	}
	var all []storage.Stats
	for _, e := range es {
		var s storage.Stats
		if err := json.Unmarshal(propBytes(e, "Stats"), &s); err != nil {
			return storage.Stats{}, fmt.Errorf("worker %s statistics: %w", e.RowKey, err)
		}
		all = append(all, s)
	}
	return SumStats(all...), nil
}

// SumStats adds statistics together.
func SumStats(all ...storage.Stats) storage.Stats {
	type key struct{ s, o, c string }
	m := map[key]int64{}
	var out storage.Stats
	var order []key
	for _, s := range all {
		out.BytesRead += s.BytesRead
		out.BytesWritten += s.BytesWritten
		for _, o := range s.Ops {
			k := key{o.Service, o.Operation, o.Category}
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] += o.Count
		}
	}
	for _, k := range order {
		out.Ops = append(out.Ops, storage.OpStat{Service: k.s, Operation: k.o, Category: k.c, Count: m[k]})
	}
	return out
}

// Report reads the run's tables and summarises them, complete or not.
func (r *Run) Report(ctx context.Context) (*report.Report, error) {
	ctx = withCategory(ctx, CategoryControl)
	rep := &report.Report{Board: r.Config.Board, TargetPly: r.Config.Target, Engine: "pipeline", Run: r.Config.Name, Root: "unknown"}
	es, err := queryAll(ctx, r.state, pkPlies, "", "")
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		p, err := r.decodePly(e)
		if err != nil {
			return nil, err
		}
		row := report.Ply{Ply: p.Ply, Positions: p.Positions, Terminal: p.Terminal, Edges: p.Edges,
			Blobs: int64(len(p.Blobs)), Merges: p.Merges, BlobReads: p.BlobReads, MergedKeys: p.Merged}
		if p.Resolved {
			row.BlackWins, row.WhiteWins, row.Draws, row.Unknown = p.Black, p.White, p.Draws, p.Unknown
		} else {
			row.Unknown = p.Positions
		}
		if p.State != plyComplete {
			continue
		}
		rep.Plies = append(rep.Plies, row)
	}
	done, err := r.Done(ctx)
	if err != nil {
		return nil, err
	}
	if done != nil {
		rep.Complete, rep.Root, rep.Score = true, done.Root, done.Score
	}
	return rep, nil
}

// Results reads a resolved ply's positions and their results.
func (r *Run) Results(ctx context.Context, ply int) (map[board.Position]board.Result, error) {
	ctx = withCategory(ctx, CategoryControl)
	p, err := r.getPly(ctx, ply)
	if err != nil {
		return nil, err
	}
	if !p.Resolved {
		return nil, fmt.Errorf("ply %d is not resolved yet", ply)
	}
	out := make(map[board.Position]board.Result, p.Positions)
	for j, blob := range p.Blobs {
		keys, err := r.readKeys(ctx, blob)
		if err != nil {
			return nil, err
		}
		res, err := r.blobs.Get(ctx, resultBlob(ply, j))
		if err != nil {
			return nil, fmt.Errorf("reading results of ply %d blob %d: %w", ply, j, err)
		}
		if len(res) != backtrack.ResultLen*len(keys) {
			return nil, fmt.Errorf("ply %d blob %d: %d bytes of results for %d positions", ply, j, len(res), len(keys))
		}
		for i, k := range keys {
			out[k], _ = backtrack.DecodeResult(res, i)
		}
	}
	return out, nil
}

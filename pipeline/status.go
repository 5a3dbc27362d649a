package pipeline

import (
	"context"
	"time"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Status reads where the run stands (see task.Step): the highest ply
// that is not yet Final is expanding, combining or merging; once every
// ply is, the highest ply still Dispatched is resolving. ok is false
// when the run is complete or between steps. It reads the ply records
// and one step's markers: a few transactions, which pollers pay every
// few seconds.
func (r *Run) Status(ctx context.Context) (s task.Step, ok bool, err error) {
	plies, err := r.store.Plies(ctx)
	if err != nil {
		return s, false, err
	}
	var open, resolving *runstore.Ply
	for _, p := range plies {
		switch {
		case !p.State.AtLeast(runstore.Final):
			if open == nil || p.Ply > open.Ply {
				open = p
			}
		case p.State == runstore.Dispatched:
			if resolving == nil || p.Ply > resolving.Ply {
				resolving = p
			}
		}
	}
	s.At = time.Now()
	switch {
	case open != nil && open.State == runstore.Expanding:
		exps, err := r.store.ExpansionStage(open).Markers(ctx)
		s.Ply, s.Name, s.Done, s.Total = open.Ply, "expanding", len(exps), open.Tasks
		return s, true, err
	case open != nil && open.Groups > 0:
		combines, err := r.store.CombineStage(open).Markers(ctx)
		if err != nil {
			return s, false, err
		}
		if n := open.Groups * open.Ranges; len(combines) < n {
			s.Ply, s.Name, s.Done, s.Total = open.Ply, "combining", len(combines), n
			return s, true, nil
		}
		fallthrough
	case open != nil:
		merges, err := r.store.MergeStage(open).Markers(ctx)
		s.Ply, s.Name, s.Done, s.Total = open.Ply, "merging", len(merges), open.Buckets
		return s, true, err
	case resolving != nil:
		rs, err := r.store.ResolutionStage(resolving).Markers(ctx)
		s.Ply, s.Name, s.Done, s.Total = resolving.Ply, "resolving", len(rs), resolving.Finals
		return s, true, err
	}
	return s, false, nil
}

// pollStatus records the run's status in progress every period until ctx
// ends. A failed read is skipped: progress is for people, and the next
// read may succeed.
func (r *Run) pollStatus(ctx context.Context, progress *Progress, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		if s, ok, err := r.Status(task.WithCategory(ctx, task.CategoryControl)); err == nil && ok {
			progress.SetStep(s)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

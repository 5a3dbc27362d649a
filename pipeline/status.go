package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Status reads where the run stands (see task.Step; stepPlies says
// which ply each step is on). ok is false when the run is complete or
// between steps. It reads the ply records
// and one or two stages' progress (runstore.Stage.Progress): a few
// transactions, O(log n) in the stage's items, which pollers pay every
// few seconds.
func (r *Run) Status(ctx context.Context) (s task.Step, ok bool, err error) {
	plies, err := r.store.Plies(ctx)
	if err != nil {
		return s, false, err
	}
	open, resolving := stepPlies(plies)
	s.At = time.Now()
	step := func(p *runstore.Ply, name string, st progressOf) (task.Step, bool, error) {
		done, err := st.Progress(ctx)
		s.Ply, s.Name, s.Done, s.Total = p.Ply, name, done, st.Items()
		return s, err == nil, err
	}
	switch {
	case open != nil && open.State == runstore.Expanding:
		return step(open, "expanding", r.store.ExpansionStage(open))
	case open != nil && open.State == runstore.Merging:
		for level := range open.Levels {
			cst := r.store.CombineStage(open, level)
			if done, err := cst.Progress(ctx); err != nil || done < cst.Items() {
				name := "combining"
				if len(open.Levels) > 1 {
					name = fmt.Sprintf("combining (level %d of %d)", level+1, len(open.Levels))
				}
				s.Ply, s.Name, s.Done, s.Total = open.Ply, name, done, cst.Items()
				return s, err == nil, err
			}
		}
		fallthrough
	case open != nil:
		return step(open, "merging", r.store.MergeStage(open))
	case resolving != nil:
		return step(resolving, "resolving", r.store.ResolutionStage(resolving))
	}
	return s, false, nil
}

// stepPlies finds the ply whose step is under way: open, the highest
// ply not yet Final, is expanding, combining or merging; once every ply
// is Final or past, resolving is the highest not yet Resolved. That one
// may still be Final: the target ply's resolutions start as the leaves
// of its dispatch enqueue them, and it becomes Dispatched after the
// last, so that for the minute a dispatch of 10^5 final blobs takes, the
// resolutions under way are its own, not the ply's before (which shows
// none done).
func stepPlies(plies []*runstore.Ply) (open, resolving *runstore.Ply) {
	for _, p := range plies {
		switch {
		case !p.State.AtLeast(runstore.Final):
			if open == nil || p.Ply > open.Ply {
				open = p
			}
		case !p.State.AtLeast(runstore.Resolved):
			if resolving == nil || p.Ply > resolving.Ply {
				resolving = p
			}
		}
	}
	if open != nil {
		resolving = nil
	}
	return open, resolving
}

// progressOf is what Status reads of a stage, whatever its marker type.
type progressOf interface {
	Items() int
	Progress(context.Context) (int, error)
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

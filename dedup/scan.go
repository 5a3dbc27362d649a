package dedup

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// ScanHandler handles S messages. Once a ply is Merging it enqueues the
// work of its merge step: in a ply with a combine level, first a combine
// for every (group, range) not yet combined; then, once all are, a merge
// for every bucket not yet merged. Once every bucket is merged it reports
// the ply merged to the flow, which makes it Final. Scans run at the
// start of a ply's merging, when its last combine is done, at its end
// (the last merge enqueues one), and when a stalled run is nudged, which
// re-enqueues the work that a lost or poisoned message left undone.
//
// Crash points: a step's inputs blob (see EncodeInputs) is written before
// any of its tasks is enqueued; its content depends only on the markers
// of the step before, which no longer change once that step is done, so
// a redelivery that finds it keeps it, and a late one that writes it
// after the ply's sweep deletes it again. Enqueuing is idempotent in
// effect (a task that finds its marker only repeats its follow-up), so a
// redelivery simply enqueues again.
var ScanHandler task.Handler = task.HandlerFunc(scan)

func scan(ctx context.Context, t *task.Task, m message.Message) error {
	store := t.Run.Store
	p, err := store.Ply(ctx, m.Ply)
	if err != nil {
		return err
	}
	switch {
	case p.State < runstore.Merging:
		return nil // expansion goes on; its last task starts the scan
	case p.State >= runstore.Final:
		return t.Flow.Merged(ctx, t, p, nil) // a redelivery may owe the follow-up
	}
	merges, err := store.BucketMerges(ctx, m.Ply)
	if err != nil {
		return err
	}
	merged := make([]bool, p.Buckets)
	open := p.Buckets
	for _, bm := range merges {
		if bm.Bucket < p.Buckets && !merged[bm.Bucket] {
			merged[bm.Bucket] = true
			open--
		}
	}
	if open == 0 {
		runs, err := store.Runs(ctx, m.Ply)
		if err != nil {
			return err
		}
		return t.Flow.Merged(ctx, t, p, runs)
	}
	// The inputs go first: merges read them. A later scan (the last one,
	// or a nudge) finds them there.
	if open == p.Buckets {
		lists, ready, err := mergeLists(ctx, t, p)
		if err != nil || !ready {
			return err
		}
		if err := putInputs(ctx, t, p.Ply, runstore.InputsBlobName(p.Ply), lists); err != nil {
			return err
		}
	}
	for b, done := range merged {
		if done {
			continue
		}
		if err := t.Run.Enqueue(ctx, message.Message{Kind: message.KindMerge, Ply: m.Ply, Index: b}); err != nil {
			return err
		}
	}
	return nil
}

// mergeLists returns each bucket merge's inputs, from the expansion
// markers or, in a ply with a combine level, from the combine markers
// once every combine task is done. Until then it enqueues the combine
// tasks not done, after their inputs, and ready is false.
func mergeLists(ctx context.Context, t *task.Task, p *runstore.Ply) (lists [][]Input, ready bool, err error) {
	store := t.Run.Store
	if p.Groups == 0 {
		exps, err := store.Expansions(ctx, p.Ply)
		if err != nil {
			return nil, false, err
		}
		return BucketInputs(exps, p.Buckets), true, nil
	}
	combines, err := store.Combines(ctx, p.Ply)
	if err != nil {
		return nil, false, err
	}
	tasks := p.Groups * p.Ranges
	done := make([]bool, tasks)
	left := tasks
	for _, c := range combines {
		if c.Index < tasks && !done[c.Index] {
			done[c.Index] = true
			left--
		}
	}
	if left == 0 {
		return MergeInputs(combines, p.Buckets, p.Groups, p.Ranges), true, nil
	}
	if left == tasks {
		exps, err := store.Expansions(ctx, p.Ply)
		if err != nil {
			return nil, false, err
		}
		lists := CombineInputs(exps, p.Tasks, p.Buckets, p.Groups, p.Ranges)
		if err := putInputs(ctx, t, p.Ply, runstore.CombineInputsBlobName(p.Ply), lists); err != nil {
			return nil, false, err
		}
	}
	for i, d := range done {
		if !d {
			if err := t.Run.Enqueue(ctx, message.Message{Kind: message.KindCombine, Ply: p.Ply, Index: i}); err != nil {
				return nil, false, err
			}
		}
	}
	return nil, false, nil
}

// putInputs writes an inputs blob once.
func putInputs(ctx context.Context, t *task.Task, ply int, name string, lists [][]Input) error {
	err := t.Run.Blobs.PutNew(ctx, name, EncodeInputs(lists))
	switch {
	case errors.Is(err, storage.ErrExists):
		return nil
	case err != nil:
		return fmt.Errorf("writing the merge inputs %s: %w", name, err)
	}
	// A scan that read the ply before another one's merges completed it
	// may write after the ply's sweep.
	_, err = t.Run.DropIfSwept(ctx, ply, name)
	return err
}

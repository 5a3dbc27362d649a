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
// The scan reads the expansion markers only in a ply without a combine
// level, whose tasks are at most the merge fan-in; with one, each
// combine task reads its own group's (combineInputs), so that no process
// reads every expansion marker with all its cuts.
//
// Crash points: the bucket merges' inputs blob (see EncodeInputs) is
// written before any of them is enqueued; its content depends only on
// the markers of the step before, which no longer change once that step
// is done, so a redelivery that finds it keeps it, and a late one that
// writes it after the ply's sweep deletes it again. Enqueuing is idempotent in
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
	mst := store.MergeStage(p)
	merges, err := mst.Markers(ctx)
	if err != nil {
		return err
	}
	open := mst.Undone(merges)
	if len(open) == 0 {
		runs, err := store.MergedBlobs(ctx, m.Ply)
		if err != nil {
			return err
		}
		return t.Flow.Merged(ctx, t, p, runs)
	}
	// The inputs go first: merges read them. A later scan (the last one,
	// or a nudge) finds them there.
	if len(open) == p.Buckets {
		lists, parts, ready, err := mergeLists(ctx, t, p)
		if err != nil || !ready {
			return err
		}
		if _, swept, err := putInputs(ctx, t, p.Ply, runstore.InputsBlobName(p.Ply), lists, parts); err != nil || swept {
			return err
		}
	}
	return enqueueAll(ctx, t, message.KindMerge, p.Ply, open)
}

// mergeLists returns each bucket merge's inputs and the parts they are
// written in (see EncodeInputs), from the expansion markers or, in a ply
// with a combine level, from the combine markers once every combine task
// is done. Until then it enqueues the combine tasks not done (at first
// the first of each group only), and ready is false: each group's first
// combine task reads the group's expansion markers itself
// (combineInputs), so that no process reads every expansion marker.
func mergeLists(ctx context.Context, t *task.Task, p *runstore.Ply) (lists [][]Input, parts int, ready bool, err error) {
	store := t.Run.Store
	if p.Groups == 0 {
		// Without a combine level the tasks are at most the fan-in.
		exps, err := store.ExpansionStage(p).Markers(ctx)
		if err != nil {
			return nil, 0, false, err
		}
		return BucketInputs(exps, p.Buckets), 1, true, nil
	}
	cst := store.CombineStage(p)
	combines, err := cst.Markers(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	switch left := cst.Undone(combines); {
	case len(left) == cst.Items():
		// Each group's first task writes the group's inputs, then
		// enqueues the others (combineTask), so that one task of each
		// group, not all at once, reads the group's markers.
		firsts := make([]int, p.Groups)
		for g := range firsts {
			firsts[g] = g * p.Ranges
		}
		return nil, 0, false, enqueueAll(ctx, t, message.KindCombine, p.Ply, firsts)
	case len(left) > 0:
		return nil, 0, false, enqueueAll(ctx, t, message.KindCombine, p.Ply, left)
	}
	return MergeInputs(combines, p.Buckets, p.Groups, p.Ranges), p.Ranges, true, nil
}

// enqueueAll enqueues a message of kind for each item of ply.
func enqueueAll(ctx context.Context, t *task.Task, kind message.Kind, ply int, items []int) error {
	for _, i := range items {
		if err := t.Run.Enqueue(ctx, message.Message{Kind: kind, Ply: ply, Index: i}); err != nil {
			return err
		}
	}
	return nil
}

// putInputs writes an inputs blob once. written reports that this call
// wrote it; swept that the ply was already Final, its blobs swept: the
// writer read it while it was open, and the inputs were deleted again,
// with nothing left to do.
func putInputs(ctx context.Context, t *task.Task, ply int, name string, lists [][]Input, parts int) (written, swept bool, err error) {
	err = t.Run.Blobs.PutNew(ctx, name, EncodeInputs(lists, parts))
	switch {
	case errors.Is(err, storage.ErrExists):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("writing the merge inputs %s: %w", name, err)
	}
	// A task that read the ply before another one's merges completed it
	// may write after the ply's sweep.
	swept, err = t.Run.DropIfSwept(ctx, ply, name)
	return err == nil && !swept, swept, err
}

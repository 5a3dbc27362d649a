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
// level, whose tasks are at most the merge fan-in, and writes the bucket
// merges' inputs blob (see EncodeInputs) from them. In a ply with one it
// reads no marker with cuts as a step starts: each group's first combine
// task and each range's first bucket merge write their part's inputs
// from their part's markers (scanLevels), so that no process reads every
// expansion or combine marker with all its cuts.
//
// Crash points: an inputs blob is written before any task that reads it
// is enqueued; its content depends only on the markers of the step
// before, which no longer change once that step is done, so a redelivery
// that finds it keeps it, and a late one that writes it after the ply's
// sweep deletes it again. Enqueuing is idempotent in
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
		return t.Flow.Merged(ctx, t, p) // a redelivery may owe the follow-up
	}
	// The last merge's scan, and any after it, read the root's marker
	// alone.
	mst := store.MergeStage(p)
	if complete, err := mst.Complete(ctx); err != nil || complete {
		if err != nil {
			return err
		}
		return t.Flow.Merged(ctx, t, p)
	}
	merges, err := mst.Markers(ctx)
	if err != nil {
		return err
	}
	open := mst.Undone(merges)
	if len(open) == 0 {
		return t.Flow.Merged(ctx, t, p) // a run of flat completion
	}
	if p.Combining() {
		return scanLevels(ctx, t, p, open)
	}
	// The inputs go first: merges read them. A later scan (the last one,
	// or a nudge) finds them there. Without a combine level the tasks are
	// at most the fan-in: the scan reads every expansion marker.
	if len(open) == p.Buckets {
		exps, err := store.ExpansionStage(p).Markers(ctx)
		if err != nil {
			return err
		}
		if _, swept, err := putInputs(ctx, t, p.Ply, runstore.InputsBlobName(p.Ply), BucketInputs(exps, p.Buckets), 1); err != nil || swept {
			return err
		}
	}
	return enqueueAll(ctx, t, message.KindMerge, p.Ply, open)
}

// scanLevels enqueues the work of a ply with combine levels whose
// buckets open are not merged: the first level not complete, or once all
// are, the bucket merges. Each step starts with the first task of its
// first part (group of a level, range of buckets), which enqueues its
// part's other tasks and the first tasks of the parts below it in a tree
// of parts (treeChildren): so that no handling enqueues a task a part.
// A scan that finds a step under way (a nudge of a stalled run) enqueues
// every task of it not done.
func scanLevels(ctx context.Context, t *task.Task, p *runstore.Ply, open []int) error {
	if len(open) < p.Buckets {
		return enqueueAll(ctx, t, message.KindMerge, p.Ply, open)
	}
	for level, l := range p.Levels {
		cst := t.Run.Store.CombineStage(p, level)
		complete, err := cst.Complete(ctx)
		if err != nil || complete {
			if err != nil {
				return err
			}
			continue
		}
		// The first part's tasks tell a level that starts (none done,
		// one query) from one under way.
		started, err := cst.MarkersIn(ctx, runstore.Span{Lo: 0, Hi: l.Ranges})
		if err != nil {
			return err
		}
		left := []int{0}
		if len(started) > 0 {
			combines, err := cst.Markers(ctx)
			if err != nil {
				return err
			}
			left = cst.Undone(combines)
		}
		for k, j := range left {
			left[k] = p.CombineIndex(level, j)
		}
		return enqueueAll(ctx, t, message.KindCombine, p.Ply, left)
	}
	return enqueueAll(ctx, t, message.KindMerge, p.Ply, []int{0})
}

// partFan is how many tasks one task enqueues through a tree as a step
// starts (treeChildren): parts' first tasks, or a large part's own tasks.
const partFan = 64

// treeChildren lists the children of node k in a tree of n nodes, 0 its
// root: nodes k*partFan+1 to k*partFan+partFan, as far as there are.
// Every node but 0 is the child of exactly one, so a step that starts
// at node 0 reaches them all in O(log n) handlings, none of which
// enqueues more than partFan of them. Steps start through two levels of
// such trees: the parts of a step (the ranges of bucket merges, the
// groups of a combine level), each part's first task enqueuing its
// children's first tasks; and the tasks of a part, each enqueuing its
// children in the part (combineTask, bucketInputs), so that a part of
// up to partFan+1 tasks is started by its first alone. The first task
// starts its share once, on the delivery that wrote the part's inputs
// blob; a task past the first, on every delivery that works, since
// nothing tells its first one (a redelivery before the commit enqueues
// its share again, which is harmless). Parts grow with
// the items: a combine group has a task for each of its level's ranges,
// which grow with the buckets over the groups, without bound under
// fixed sizes; a range of bucket merges has up to the merge fan-in's
// buckets (1,024 by default; 279 at the plan's ply 17).
//
// A part other than the first (a range of bucket merges, a group of
// combine tasks), once its first task has written the part's inputs
// blob and enqueued the part's other tasks, sends that task again after
// them (task.ErrRequeued) instead of doing it then: so the queue holds
// the tasks part by part, and a few workers finish one part (and delete
// what it was the last to read, dedup/release.go) before they start the
// next. Had the first task worked at once, every part would be started
// before any was finished, each holding its inputs beside its first
// task's output: at 8x8 ply 14, about 3 GB of disk more at the peak of
// the merges (16 ranges), and 4 GB more at the start of the combine (84
// groups of 8 ranges, whose first ranges are seldom empty). A fleet
// still opens every part within O(log parts) steps of a few storage
// calls. (A part of more than partFan+1 tasks is queued in turn only as
// far as its first task's children.)
func treeChildren(k, n int) []int {
	lo := k*partFan + 1
	return seq(min(lo, n), min(lo+partFan, n))
}

// offset adds base to each of items.
func offset(base int, items []int) []int {
	for k := range items {
		items[k] += base
	}
	return items
}

// seq lists the items [lo, hi).
func seq(lo, hi int) []int {
	out := make([]int, 0, max(0, hi-lo))
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// startPart enqueues, for the first task of a part, the part's other
// tasks (others) and the first tasks of its child parts (children); a
// part that takes its turn (treeChildren says why) then enqueues its first
// task, first, again after them and returns task.ErrRequeued, so that
// the delivery ends there.
func startPart(ctx context.Context, t *task.Task, kind message.Kind, ply int, others, children []int, first int, turn bool) error {
	next := append(others, children...)
	if turn {
		next = append(next, first)
	}
	if err := enqueueAll(ctx, t, kind, ply, next); err != nil {
		return err
	}
	if turn {
		return task.ErrRequeued
	}
	return nil
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

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
// work of its merge step: in a ply with combine levels, the tasks of the
// first level not complete; once all are, the bucket merges. Once every
// bucket is merged it reports the ply merged to the flow, which makes it
// Final. Scans run at the start of a ply's merging, when a level's last
// combine is done, at its end (the last merge enqueues one), and when a
// stalled run is nudged, which re-enqueues the work that a lost or
// poisoned message left undone.
//
// A step of a ply with combine levels starts through trees
// (treeChildren): the scan enqueues its first task alone, which starts
// the others. A scan that finds a task of the step's first part done
// (the step under way: a nudge) enqueues every task of the step not
// done; it looks at the part's first scanSpan tasks, which are the whole
// part in every ply of the default sizes' plan. The bucket merges of
// a ply without levels start from the scan, which first writes their
// inputs blob (see EncodeInputs) from the expansion markers: such a ply
// has at most twice the merge fan-in's tasks.
//
// What one handling reads and enqueues is bounded, however many tasks a
// step has: the scans form a tree of their own (S<ply> is node 0,
// S<ply>-<node> the others, in runs of runstore.MessagesScanNodes), node
// k covering tasks [k*scanSpan, (k+1)*scanSpan) of the step. A node reads
// the markers of its span alone, enqueues the tasks of it not done and
// the scans of its children (treeChildren), so a nudge of a step of n
// tasks takes about n/scanSpan handlings, each of a few reads and at most
// scanSpan+partFan messages, in O(log n) rounds. A node works on the step
// it finds, not the one its parent found: a node that finds a step not
// yet under way leaves it to its first task. In a run of the earlier
// forms, whose workers may not read a node, node 0 covers the whole step.
//
// Crash points: an inputs blob is written before any task that reads it
// is enqueued; its content depends only on the markers of the step
// before, which no longer change once that step is done, so a redelivery
// that finds it keeps it, and a late one that writes it after the ply's
// sweep deletes it again. Enqueuing is idempotent in effect (a task that
// finds its marker only repeats its follow-up; a scan node enqueued
// twice enqueues its span twice), so a redelivery simply enqueues again.
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
	if complete, err := store.MergeStage(p).Complete(ctx); err != nil || complete {
		if err != nil {
			return err
		}
		return t.Flow.Merged(ctx, t, p)
	}
	st, err := stepOf(ctx, t.Run.Store, p)
	if err != nil {
		return err
	}
	return scanNode(ctx, t, p, st, m.Index)
}

// scanSpan is how many of a step's tasks one scan node covers.
const scanSpan = partFan

// A step is the work of a merging ply that a scan enqueues: the tasks of
// a combine level, or the bucket merges.
type step struct {
	kind  message.Kind
	items int
	// first is how many tasks the step's first part has, whose task 0
	// starts the step through trees; 0 when the scan starts every task.
	first int
	// index is the message index of the step's task j.
	index func(j int) int
	// undone lists the tasks of a span that are not done.
	undone func(ctx context.Context, span runstore.Span) ([]int, error)
}

// stepOf is the step of ply p under way: its first combine level not
// complete, or its bucket merges.
func stepOf(ctx context.Context, store *runstore.Store, p *runstore.Ply) (step, error) {
	for level := range p.Levels {
		cst := store.CombineStage(p, level)
		complete, err := cst.Complete(ctx)
		switch {
		case err != nil:
			return step{}, err
		case !complete:
			return step{kind: message.KindCombine, items: cst.Items(), first: p.Levels[level].Ranges, undone: cst.UndoneIn,
				index: func(j int) int { return p.CombineIndex(level, j) }}, nil
		}
	}
	st := step{kind: message.KindMerge, items: p.Buckets, undone: store.MergeStage(p).UndoneIn,
		index: func(j int) int { return j }}
	if p.Combining() {
		st.first = runstore.SpanOf(0, p.Buckets, p.Top().Ranges).Hi
	}
	return st, nil
}

// scanNode enqueues the tasks of scan node's span of step st that are
// not done, and the scans of its children; in a run of the earlier
// forms, node 0 covers the whole step.
func scanNode(ctx context.Context, t *task.Task, p *runstore.Ply, st step, node int) error {
	// first is what node 0 has read of its span already: the tasks of
	// [0, look) not done.
	var first []int
	look := 0
	if st.first > 0 {
		look = min(st.first, scanSpan)
		var err error
		first, err = st.undone(ctx, runstore.Span{Lo: 0, Hi: look})
		switch {
		case err != nil:
			return err
		case len(first) == look && node == 0:
			return enqueueAll(ctx, t, st.kind, p.Ply, []int{st.index(0)}) // it starts the step
		case len(first) == look:
			return nil // not under way: node 0's
		}
	}
	span, children := runstore.Span{Lo: 0, Hi: st.items}, []int(nil)
	if t.Run.Messages >= runstore.MessagesScanNodes {
		nodes := (st.items + scanSpan - 1) / scanSpan
		if node >= nodes {
			return nil // a node of a step with more tasks
		}
		span = runstore.Span{Lo: node * scanSpan, Hi: min((node+1)*scanSpan, st.items)}
		children = treeChildren(node, nodes)
	}
	if node != 0 {
		look, first = 0, nil
	}
	undone, err := st.undone(ctx, runstore.Span{Lo: span.Lo + look, Hi: span.Hi})
	if err != nil {
		return err
	}
	undone = append(first, undone...)
	if st.first == 0 && node == 0 && len(undone) == span.Hi-span.Lo {
		// The bucket merges of a ply without levels start here: their
		// inputs go first. A nudge that finds this span's merges undone
		// but others done finds the blob there.
		exps, err := t.Run.Store.ExpansionStage(p).Markers(ctx)
		if err != nil {
			return err
		}
		if _, swept, err := putInputs(ctx, t, p.Ply, runstore.InputsBlobName(p.Ply), BucketInputs(exps, p.Buckets), 1); err != nil || swept {
			return err
		}
	}
	if len(undone) == 0 && span.Hi-span.Lo == p.Buckets && st.kind == message.KindMerge {
		return t.Flow.Merged(ctx, t, p) // flat completion: every merge done, the group markers not
	}
	if err := enqueueAll(ctx, t, message.KindScan, p.Ply, children); err != nil {
		return err
	}
	for k, j := range undone {
		undone[k] = st.index(j)
	}
	return enqueueAll(ctx, t, st.kind, p.Ply, undone)
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

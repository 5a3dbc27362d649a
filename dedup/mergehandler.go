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

// MergeHandler handles M messages: it k-way merges one bucket's segment
// of every expansion blob (or, in a ply with a combine level, of every
// combined run) of a Merging ply into merged blobs of distinct
// positions, with their backtracking rows, and commits them with the
// bucket's marker (runstore.MergeStage; task.Items carries the sequence).
// Every bucket is merged in one round: its inputs are read once,
// whatever their number.
//
// Crash points: output blobs (and their backtracking rows) carry this
// attempt's tag, so a retry writes its own, and one compensation
// message covers them all until the marker names this attempt, deleting
// them otherwise, even while a retry runs. Output rows written before a crash, without
// the marker, are never read as outputs. Once the marker exists, a
// redelivery only repeats the follow-up, which is idempotent. The context
// reaches every read and write, so a lost lease or a stopping worker
// abandons the merge within one block of I/O.
var MergeHandler task.Handler = task.Items[runstore.BucketMerge]{
	Stage: task.Whole((*runstore.Store).MergeStage),
	Work: func(ctx context.Context, t *task.Task, p *runstore.Ply, m message.Message) (runstore.BucketMerge, task.Cover, error) {
		return mergeBucket(ctx, t, p, m.Index)
	},
	Won:      func(t *task.Task) { t.Progress.Merges.Add(1) },
	FollowUp: afterMerge,
}

// mergeBucket merges a bucket's inputs into its outputs and returns the
// marker that commits them and the compensation message that covers
// their blobs (runstore.MergeOutputsName). It must still be hidden at
// the commit (task.Do checks it): a merge that outlived it would commit
// a record naming deleted blobs.
func mergeBucket(ctx context.Context, t *task.Task, p *runstore.Ply, bucket int) (runstore.BucketMerge, task.Cover, error) {
	inputs, err := bucketInputs(ctx, t, p, bucket)
	if err != nil {
		return runstore.BucketMerge{}, nil, err
	}
	readers, closeReaders, err := openInputs(ctx, t.Run, inputs)
	if err != nil {
		return runstore.BucketMerge{}, nil, fmt.Errorf("bucket %d of ply %d: %w", bucket, p.Ply, err)
	}
	defer closeReaders()
	out := newOutput(ctx, t, p, bucket)
	read, err := Merge(readers, out.addAll)
	if err == nil {
		err = ctx.Err() // a merge of small segments may not touch storage again before its commit
	}
	if err != nil {
		return runstore.BucketMerge{}, nil, fmt.Errorf("merging bucket %d of ply %d: %w", bucket, p.Ply, err)
	}
	if err := out.close(); err != nil {
		return runstore.BucketMerge{}, nil, err
	}
	return runstore.BucketMerge{Bucket: bucket, Attempt: t.Attempt(), Segments: int64(len(readers)), Entries: read,
		Outputs: int64(len(out.runs)), Merged: out.runs}, &out.comps, nil
}

// bucketInputs reads bucket's list of its inputs blob: the ply's, which
// the scan wrote, or in a ply with a combine level its range's. The
// first of the range's buckets to find that one missing writes it from
// the range's combine markers, one of each group; when that is the
// range's first bucket, which the scan enqueued, it then starts the
// range's other buckets, which read it, through the range's tree of
// buckets (treeChildren): it enqueues up to partFan of them, and each of
// those, as it reads its list, its own children in the tree. Its content
// depends on the combine markers alone, which are all there and no
// longer change once the bucket merges start: of merges that write it
// together, the first write stands and the others read the same lists.
func bucketInputs(ctx context.Context, t *task.Task, p *runstore.Ply, bucket int) ([]Input, error) {
	if !p.Combining() {
		return ReadInputs(ctx, t.Run, runstore.InputsBlobName(p.Ply), bucket, p.Buckets)
	}
	top := p.Top()
	r := runstore.PartOf(bucket, p.Buckets, top.Ranges)
	span := runstore.SpanOf(r, p.Buckets, top.Ranges)
	k, n := bucket-span.Lo, span.Hi-span.Lo
	// The range's buckets this one starts, of its tree (treeChildren
	// says on which deliveries).
	share := offset(span.Lo, treeChildren(k, n))
	name := runstore.RangeInputsBlobName(p.Ply, r)
	inputs, err := ReadInputs(ctx, t.Run, name, k, n)
	switch {
	case err == nil && k > 0:
		return inputs, enqueueAll(ctx, t, message.KindMerge, p.Ply, share)
	case !errors.Is(err, storage.ErrNotFound):
		return inputs, err
	}
	combines, err := t.Run.Store.CombineStage(p, len(p.Levels)-1).MarkersAt(ctx, rangeTasks(p, r))
	switch {
	case err != nil:
		return nil, err
	case len(combines) < top.Groups:
		return nil, fmt.Errorf("bucket %d of ply %d: %d of the %d combine tasks of its range are done", bucket, p.Ply, len(combines), top.Groups)
	}
	lists := MergeInputs(combines, p.Buckets, top.Groups, top.Ranges)[span.Lo:span.Hi]
	wrote, swept, err := putInputs(ctx, t, p.Ply, name, lists, 1)
	switch {
	case err != nil:
		return nil, err
	case swept:
		return nil, fmt.Errorf("ply %d was made final while bucket %d read its inputs", p.Ply, bucket)
	}
	switch {
	case wrote && k == 0:
		// The range's first bucket starts its share of the range, and
		// the first buckets of the ranges below it in the tree of ranges
		// (treeChildren). A crash before they are enqueued leaves them to
		// the scan of a stalled run. A range other than the first sends
		// its first bucket after the others (treeChildren says why).
		var firsts []int
		for _, h := range treeChildren(r, top.Ranges) {
			firsts = append(firsts, runstore.SpanOf(h, p.Buckets, top.Ranges).Lo)
		}
		if err := startPart(ctx, t, message.KindMerge, p.Ply, share, firsts, bucket, r > 0); err != nil {
			return nil, err
		}
	case k > 0:
		if err := enqueueAll(ctx, t, message.KindMerge, p.Ply, share); err != nil {
			return nil, err
		}
	}
	return lists[k], nil
}

// afterMerge deletes the combined runs that bucket was the last to need
// (releaseRange), then enqueues the scan that completes the ply once
// every bucket is merged. The scan may be enqueued more than once, which
// is harmless.
func afterMerge(ctx context.Context, t *task.Task, st runstore.Stage[runstore.BucketMerge], bucket int) error {
	p := st.Ply()
	if p.Combining() {
		if err := releaseRange(ctx, t, p, runstore.PartOf(bucket, p.Buckets, p.Top().Ranges)); err != nil {
			return err
		}
	}
	all, err := st.AllDone(ctx, bucket)
	if err != nil || !all {
		return err
	}
	return t.Run.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply})
}

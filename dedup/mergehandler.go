package dedup

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// MergeHandler handles M messages: it k-way merges one bucket's segment
// of every expansion blob (or, in a ply with a combine level, of every
// combined run) of a Merging ply into final blobs of distinct
// positions, with their backtracking rows, and commits them with the
// bucket's marker (runstore.CommitBucket). Every bucket is merged in one
// round: its inputs are read once, whatever their number.
//
// Crash points: output blobs (and their backtracking rows) carry this
// attempt's tag, so a retry writes its own, and a compensation message
// covers each until the marker names this attempt, deleting it otherwise,
// even while a retry runs. Output rows written before a crash, without
// the marker, are never read as outputs. Once the marker exists, a
// redelivery only repeats the follow-up, which is idempotent. The context
// reaches every read and write, so a lost lease or a stopping worker
// abandons the merge within one block of I/O.
var MergeHandler task.Handler = task.HandlerFunc(merge)

func merge(ctx context.Context, t *task.Task, m message.Message) error {
	run, store, bucket := t.Run, t.Run.Store, m.Index
	p, err := store.Ply(ctx, m.Ply)
	if err != nil {
		return err
	}
	switch {
	case p.State < runstore.Merging:
		return message.Badf("ply %d is %s: its buckets are merged only once it is merging", m.Ply, p.State)
	case p.State > runstore.Merging:
		return nil // a stale duplicate: the ply is complete
	case bucket >= p.Buckets:
		return message.Badf("ply %d has %d buckets, not %d", m.Ply, p.Buckets, bucket+1)
	}
	if _, done, err := store.BucketMerged(ctx, m.Ply, bucket); err != nil || done {
		if err != nil {
			return err
		}
		return afterMerge(ctx, t, p, bucket)
	}
	inputs, err := ReadInputs(ctx, run, runstore.InputsBlobName(m.Ply), bucket, p.Buckets)
	if err != nil {
		return err
	}
	readers, closeReaders, err := openInputs(ctx, run, inputs)
	if err != nil {
		return fmt.Errorf("bucket %d of ply %d: %w", bucket, m.Ply, err)
	}
	defer closeReaders()
	out := newOutput(ctx, t, p, bucket)
	read, err := Merge(readers, out.add)
	if err == nil {
		err = ctx.Err() // a merge of small segments may not touch storage again before its commit
	}
	if err != nil {
		return fmt.Errorf("merging bucket %d of ply %d: %w", bucket, m.Ply, err)
	}
	if err := out.close(); err != nil {
		return err
	}
	// Every output blob's compensation message must still be hidden: the
	// first one written surfaces first, and a merge that outlived it
	// would commit a record naming a deleted blob.
	if err := out.comps.Check(); err != nil {
		return err
	}
	bm := runstore.BucketMerge{Bucket: bucket, Attempt: t.Attempt(), Segments: int64(len(readers)), Entries: read, Outputs: int64(len(out.runs))}
	won, err := store.CommitBucket(ctx, m.Ply, bm, out.runs)
	if err != nil {
		return err
	}
	if won {
		out.comps.Done(ctx)
		t.Progress.Merges.Add(1)
	} else {
		// Another attempt committed first: our blobs are no record's, and
		// their compensation messages delete them.
		_ = store.DropRuns(ctx, m.Ply, out.bucket, out.runs)
	}
	return afterMerge(ctx, t, p, bucket)
}

// afterMerge deletes the combined runs that bucket was the last to need
// (releaseRange), then enqueues the scan that completes the ply once
// every bucket is merged. The scan may be enqueued more than once, which
// is harmless.
func afterMerge(ctx context.Context, t *task.Task, p *runstore.Ply, bucket int) error {
	if p.Groups > 0 {
		if err := releaseRange(ctx, t, p, runstore.PartOf(bucket, p.Buckets, p.Ranges)); err != nil {
			return err
		}
	}
	all, err := t.Run.Store.AllMerged(ctx, p, bucket)
	if err != nil || !all {
		return err
	}
	return t.Run.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply})
}

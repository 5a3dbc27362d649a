package dedup

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// MergeHandler handles M messages: it k-way merges the runs its claim
// owns into one run (partial) or into final blobs of distinct positions
// with their backtracking rows (final), then swaps the records in one
// transaction (runstore.CommitMerge). Then it plans its bucket's next
// merges (planBucket).
//
// Crash points: output blobs (and their backtracking rows) carry this
// attempt's tag, so a retry writes its own, and a compensation message
// covers each until the swap commits, deleting it if the swap never names
// it, even while a retry runs. If the swap already committed (the claim's
// statistics row exists) the retry only repeats the follow-up, which is
// idempotent. The context reaches every read and write, so a lost lease
// or a stopping worker abandons the merge within one block of I/O,
// leaving only blobs that compensation cleans up.
var MergeHandler task.Handler = task.HandlerFunc(merge)

func merge(ctx context.Context, t *task.Task, m message.Message) error {
	run, store, c := t.Run, t.Run.Store, m.Claim
	if done, err := store.MergeCommitted(ctx, m.Ply, c); err != nil || done {
		if err != nil {
			return err
		}
		return planBucket(ctx, t, m.Ply, c.Bucket)
	}
	runs, err := store.BucketRuns(ctx, m.Ply, c.Bucket)
	if err != nil {
		return err
	}
	var inputs []*runstore.Run
	for _, r := range runs {
		if r.ClaimedBy(c) {
			inputs = append(inputs, r)
		}
	}
	if len(inputs) == 0 {
		return nil // nothing owned by this claim: a stale or duplicate message
	}
	readers := make([]*Reader, len(inputs))
	for i, in := range inputs {
		if in.Final {
			return fmt.Errorf("run %s of ply %d is final and overlaps another run: the ply's records are inconsistent", in.Key, m.Ply)
		}
		rc, err := run.Blobs.Open(ctx, in.Blob, in.Off, in.Len)
		if err != nil {
			return fmt.Errorf("opening run %s: %w", in.Key, err)
		}
		defer rc.Close()
		readers[i] = NewReaderSize(rc, in.Len)
	}
	out := newOutput(ctx, t, m.Ply, c)
	read, err := Merge(readers, out.add)
	if err == nil {
		err = ctx.Err() // a merge of small runs may not touch storage again before its commit
	}
	if err != nil {
		return fmt.Errorf("merging runs of ply %d: %w", m.Ply, err)
	}
	if err := out.close(); err != nil {
		return err
	}
	st := runstore.MergeStats{Reads: int64(len(inputs)), Entries: read, Outputs: int64(len(out.runs))}
	if err := store.CommitMerge(ctx, m.Ply, c, inputs, out.runs, st); err != nil {
		if done, gerr := store.MergeCommitted(ctx, m.Ply, c); gerr != nil || !done {
			return err
		}
		// Another attempt of this claim committed (or ours did and its
		// answer was lost). Our outputs may then be no record's, as they
		// carry our attempt's tag: let their compensation decide.
		out.comps = nil
	}
	for _, p := range out.comps {
		_ = p.Done(ctx)
	}
	t.Progress.Merges.Add(1)
	return planBucket(ctx, t, m.Ply, c.Bucket)
}

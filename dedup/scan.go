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

// ScanHandler handles S messages. Once a ply is Merging it enqueues a
// merge for every bucket not yet merged; once every bucket is merged it
// reports the ply merged to the flow, which makes it Final. Scans run at
// the start of a ply's merging, at its end (the last merge enqueues one),
// and when a stalled run is nudged, which re-enqueues the merges that a
// lost or poisoned message left undone.
//
// Crash points: the first scan writes the ply's merge inputs (see
// EncodeInputs) before any merge is enqueued; their content depends only
// on the frozen expansion markers, so a redelivery that finds them keeps
// them, and a late one that writes them after the ply's sweep deletes
// them again. Enqueuing is idempotent in effect (a merge of a merged bucket
// only repeats its follow-up), so a redelivery simply enqueues again.
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
		exps, err := store.Expansions(ctx, m.Ply)
		if err != nil {
			return err
		}
		name := runstore.InputsBlobName(m.Ply)
		err = t.Run.Blobs.PutNew(ctx, name, EncodeInputs(exps, p.Buckets))
		switch {
		case errors.Is(err, storage.ErrExists):
		case err != nil:
			return fmt.Errorf("writing the merge inputs of ply %d: %w", m.Ply, err)
		default:
			// A scan that read the ply before another one's merges
			// completed it may write after the ply's sweep.
			if swept, err := t.Run.DropIfSwept(ctx, m.Ply, name); err != nil || swept {
				return err
			}
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

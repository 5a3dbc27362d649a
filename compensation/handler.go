package compensation

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Handler handles X messages when they surface: it deletes the blobs
// the message covers unless they stay (runstore.Store.Keep, which
// fences the writing attempt's commit first, so a marker can never come
// to name them afterwards), each with the backtracking rows an orphaned
// final blob may have. A message covers one blob, or every output of a
// merge attempt (runstore.MergeOutputsName), which are listed.
//
// Crash points: the fence and the deletions are idempotent, and the
// message is deleted last, so a redelivery repeats them. A blob's rows
// go before the blob: a redelivery that lists the attempt's outputs
// again finds each blob whose rows may be left.
var Handler task.Handler = task.HandlerFunc(handle)

func handle(ctx context.Context, t *task.Task, m message.Message) error {
	store := t.Run.Store
	keep, err := store.Keep(ctx, m.Blob)
	if err != nil {
		return fmt.Errorf("checking whether %s is in use: %w", m.Blob, err)
	}
	if keep {
		return nil
	}
	b, _ := runstore.ParseBlobName(m.Blob)
	if !b.AllOutputs {
		if err := storage.DeleteBlob(ctx, t.Run.Blobs, m.Blob); err != nil {
			return fmt.Errorf("deleting orphaned blob %s: %w", m.Blob, err)
		}
		return store.DeleteSources(ctx, m.Blob)
	}
	blobs, err := t.Run.Blobs.List(ctx, runstore.FinalRunBlobPrefix(b.Ply, b.Index))
	if err != nil {
		return fmt.Errorf("listing the outputs %s: %w", m.Blob, err)
	}
	for _, o := range blobs {
		if !runstore.Covers(m.Blob, o.Name) {
			continue
		}
		if err := store.DeleteSources(ctx, o.Name); err != nil {
			return err
		}
		if err := storage.DeleteBlob(ctx, t.Run.Blobs, o.Name); err != nil {
			return fmt.Errorf("deleting orphaned blob %s: %w", o.Name, err)
		}
	}
	return nil
}

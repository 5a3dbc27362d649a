package compensation

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Handler handles X messages when they surface: it deletes the blob
// unless it stays (runstore.Store.Keep, which fences the writing
// attempt's commit first, so a marker can never come to name the blob
// afterwards), and then the backtracking rows an orphaned final blob
// may have.
//
// Crash points: the fence, deleting the blob and then its rows are
// idempotent, and the message is deleted last, so a redelivery repeats
// them.
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
	if err := storage.DeleteBlob(ctx, t.Run.Blobs, m.Blob); err != nil {
		return fmt.Errorf("deleting orphaned blob %s: %w", m.Blob, err)
	}
	return store.DeleteSources(ctx, m.Blob)
}

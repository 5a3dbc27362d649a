// Package compensation cleans up blobs orphaned by a crash. Before a task
// writes a blob that only a later table record makes reachable, it
// enqueues a compensation message with an initial visibility delay. Once
// the record is committed the task deletes the message. If the task dies
// in between, the message surfaces after the delay and its handler deletes
// the blob, unless a record did make it live: the crash may have come
// after the commit and before the delete.
package compensation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// ErrExpired means a task ran so long that its compensation message may
// already have surfaced and deleted its blob, so it must not commit. The
// task's message is retried later from the start.
var ErrExpired = errors.New("compensation: task outlived its compensation delay; not committing")

// Pending is one enqueued compensation message.
type Pending struct {
	queue    storage.Queue
	receipt  storage.Receipt
	deadline time.Time
}

// Enqueue announces a blob about to be written. margin is how long before
// the message surfaces the writer must have committed: at least one
// visibility timeout, so a commit in flight cannot race the handler.
func Enqueue(ctx context.Context, q storage.Queue, text string, delay, margin time.Duration) (*Pending, error) {
	start := time.Now()
	rc, err := q.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1})
	if err != nil {
		return nil, fmt.Errorf("enqueuing compensation %s: %w", text, err)
	}
	return &Pending{queue: q, receipt: rc, deadline: start.Add(delay - margin)}, nil
}

// Check returns ErrExpired once the commit deadline has passed.
func (p *Pending) Check() error {
	if time.Now().After(p.deadline) {
		return ErrExpired
	}
	return nil
}

// Done deletes the message after the record is committed. A message that
// is already gone is fine: it surfaced, found the blob live, and left it.
func (p *Pending) Done(ctx context.Context) error {
	err := p.queue.Delete(ctx, p.receipt.ID, p.receipt.PopReceipt)
	if err == nil || errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrLeaseLost) {
		return nil
	}
	return fmt.Errorf("deleting compensation message: %w", err)
}

// Handle runs when a compensation message surfaces: it deletes the blob
// unless live reports that a record refers to it, and then runs cleanup
// for anything else the orphan left behind. Both steps are idempotent, so
// a redelivery repeats them harmlessly.
func Handle(ctx context.Context, c storage.Container, blob string, live func(context.Context) (bool, error), cleanup func(context.Context) error) (deleted bool, err error) {
	ok, err := live(ctx)
	if err != nil {
		return false, fmt.Errorf("checking whether %s is live: %w", blob, err)
	}
	if ok {
		return false, nil
	}
	if err := c.Delete(ctx, blob); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return false, fmt.Errorf("deleting orphaned blob %s: %w", blob, err)
	}
	if cleanup != nil {
		if err := cleanup(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

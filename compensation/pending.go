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

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// ErrExpired means a task ran so long that its compensation message may
// already have surfaced and deleted its blob, so it must not commit. The
// task's message is retried later from the start.
var ErrExpired = errors.New("compensation: task outlived its compensation delay; not committing")

// Pending is one enqueued compensation message.
type Pending struct {
	queue    storage.Queue
	receipt  storage.Receipt
	now      func() time.Time
	deadline time.Time
}

// Cover announces a blob of ply that t is about to write, with the
// task's compensation delay; the commit must come at least one visibility
// timeout before the message surfaces, so a commit in flight cannot race
// its handler.
func Cover(ctx context.Context, t *task.Task, ply int, blob string) (*Pending, error) {
	text := message.Message{Kind: message.KindCompensation, Ply: ply, Blob: blob}.Format()
	now := t.Now
	if now == nil {
		now = time.Now
	}
	return Enqueue(ctx, t.Run.Work, text, t.Timing.CompensationDelay, t.Timing.Visibility, now)
}

// Enqueue announces a blob about to be written. margin is how long before
// the message surfaces the writer must have committed: at least one
// visibility timeout, so a commit in flight cannot race the handler. now
// is the writer's clock.
func Enqueue(ctx context.Context, q storage.Queue, text string, delay, margin time.Duration, now func() time.Time) (*Pending, error) {
	start := now()
	rc, err := q.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1})
	if err != nil {
		return nil, fmt.Errorf("enqueuing compensation %s: %w", text, err)
	}
	return &Pending{queue: q, receipt: rc, now: now, deadline: start.Add(delay - margin)}, nil
}

// Check returns ErrExpired once the commit deadline has passed.
func (p *Pending) Check() error {
	if p.now().After(p.deadline) {
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

// Set is the compensation messages of one task, which may write several
// blobs before it commits them all at once. Each blob's message surfaces
// on its own deadline, so the commit must come before the earliest: a
// task that checked each blob only as it wrote it could commit after its
// first blob's message had deleted that blob.
type Set struct{ pending []*Pending }

// Cover announces a blob of ply that t is about to write (see Cover) and
// adds its message to the set.
func (s *Set) Cover(ctx context.Context, t *task.Task, ply int, blob string) error {
	p, err := Cover(ctx, t, ply, blob)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, p)
	return nil
}

// Check returns ErrExpired once the earliest deadline of the set has
// passed. Call it immediately before the commit.
func (s *Set) Check() error {
	for _, p := range s.pending {
		if err := p.Check(); err != nil {
			return err
		}
	}
	return nil
}

// Done deletes every message of the set after the commit. Errors are
// ignored: a message left behind surfaces, finds its blob in use, and
// goes.
func (s *Set) Done(ctx context.Context) {
	for _, p := range s.pending {
		_ = p.Done(ctx)
	}
}

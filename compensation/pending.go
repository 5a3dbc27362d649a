// Package compensation cleans up blobs orphaned by a crash. Before a task
// writes a blob that only a later table record makes reachable, it
// enqueues a compensation message with an initial visibility delay (a
// bucket merge, one message for all the outputs of its attempt:
// runstore.MergeOutputsName). Once
// the record is committed the task deletes the message. If the task dies
// in between, the message surfaces after the delay and its handler deletes
// the blob, unless a record did make it live: the crash may have come
// after the commit and before the delete.
//
// The window follows the task: while the task lives, its lease renews
// the messages (Pending.Renew), so a merge that writes hundreds of blobs
// over many minutes commits, and a dead task's messages surface within
// the delay. A commit that lands late anyway (a lease that could not
// renew, a commit retried for minutes under throttling) is refused by
// the fence its marker shares with the handler (runstore.Store.Keep).
package compensation

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	queue         storage.Queue
	id            string
	delay, margin time.Duration
	now           func() time.Time

	mu       sync.Mutex
	receipt  string    // the message's pop receipt, as the last renewal left it
	surfaces time.Time // when the message surfaces unless renewed
	// over: the deadline passed, or the message was deleted or taken;
	// it is never renewed again, and Check refuses.
	over bool
}

// Cover announces a blob of ply that t is about to write, on the run's
// compensation queue with the task's compensation delay, and has t's
// lease renew its message (see Enqueue).
func Cover(ctx context.Context, t *task.Task, ply int, blob string) (*Pending, error) {
	text := message.Message{Kind: message.KindCompensation, Ply: ply, Blob: blob}.Format()
	now := t.Now
	if now == nil {
		now = time.Now
	}
	p, err := Enqueue(ctx, t.Run.Compensation, text, t.Timing.CompensationDelay, t.Timing.Visibility, now)
	if err != nil {
		return nil, err
	}
	if t.Hold != nil {
		t.Hold(p)
	}
	return p, nil
}

// Enqueue announces a blob about to be written, in a message hidden for
// delay. margin is how long before the message surfaces the writer must
// have committed: at least one visibility timeout, so a commit in flight
// does not race the handler (the fence settles it if it does). now is
// the writer's clock.
func Enqueue(ctx context.Context, q storage.Queue, text string, delay, margin time.Duration, now func() time.Time) (*Pending, error) {
	start := now()
	rc, err := q.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1})
	if err != nil {
		return nil, fmt.Errorf("enqueuing compensation %s: %w", text, err)
	}
	return &Pending{queue: q, id: rc.ID, delay: delay, margin: margin, now: now, receipt: rc.PopReceipt, surfaces: start.Add(delay)}, nil
}

// expired reports, with p.mu held, whether the commit deadline has
// passed, and makes it final.
func (p *Pending) expired() bool {
	if !p.over && p.now().After(p.surfaces.Add(-p.margin)) {
		p.over = true
	}
	return p.over
}

// Check returns ErrExpired once the commit deadline has passed: one
// margin before the message surfaces, as the last renewal left it.
func (p *Pending) Check() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.expired() {
		return ErrExpired
	}
	return nil
}

// Renew hides the message for the delay again once half the time to
// its deadline has passed: the lease calls it every third of a
// visibility timeout, the delay is at least two of those and the margin
// one, so a live task renews well before its deadline, about every half
// delay. A message past its deadline is never renewed: it may have
// surfaced already. A failed renewal leaves the deadline as it was; the
// next may succeed.
func (p *Pending) Renew(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.now()
	if p.expired() || p.surfaces.Add(-p.margin).Sub(start) > (p.delay-p.margin)/2 {
		return
	}
	rc, err := p.queue.UpdateVisibility(ctx, p.id, p.receipt, p.delay)
	switch {
	case err == nil:
		p.receipt, p.surfaces = rc, start.Add(p.delay)
	case errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrLeaseLost):
		// Deleted after the commit, or surfaced and taken: over.
		p.over = true
	}
}

// Done deletes the message after the record is committed. A message that
// is already gone is fine: it surfaced, found the blob live, and left it.
func (p *Pending) Done(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.over = true
	err := p.queue.Delete(ctx, p.id, p.receipt)
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

package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Clock is the time source of leases and tasks (WorkerConfig.Clock), so
// tests can drive it.
type Clock interface {
	Now() time.Time
	// After fires once d has passed.
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// errLeaseLost reports a task abandoned because another consumer took
// its message over.
var errLeaseLost = errors.New("lease lost: another delivery owns the message")

// Lease keeps a dequeued message hidden while its task runs: it renews the
// visibility timeout every third of it. When a renewal finds the message
// taken over (its pop receipt stale) or gone, the lease is lost and the
// task's context is cancelled, so the task stops before it commits.
//
// It keeps the messages the task holds hidden too (Hold: the
// compensation messages of the blobs it writes), so that they surface
// only once the task has died or ended, never while it works; a lost
// lease stops renewing them, since its task will not commit.
type Lease struct {
	queue      storage.Queue
	id         string
	visibility time.Duration
	clock      Clock
	cancel     context.CancelCauseFunc
	stop       chan struct{}
	done       chan struct{}

	mu      sync.Mutex
	receipt string
	lost    bool
	held    []task.Hidden
}

// Hold has the lease renew h with the message until Release: it is
// task.Task.Hold.
func (l *Lease) Hold(h task.Hidden) {
	l.mu.Lock()
	l.held = append(l.held, h)
	l.mu.Unlock()
}

// HoldLease starts renewing msg's lease and returns the context the task
// runs under: cancelled, with cause errLeaseLost, when the lease is lost.
// Release must be called when the task ends.
func HoldLease(ctx context.Context, q storage.Queue, msg storage.Message, visibility time.Duration, clock Clock) (*Lease, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	l := &Lease{queue: q, id: msg.ID, visibility: visibility, clock: clock, cancel: cancel,
		stop: make(chan struct{}), done: make(chan struct{}), receipt: msg.PopReceipt}
	go l.renew(ctx)
	return l, ctx
}

func (l *Lease) renew(ctx context.Context) {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		case <-l.clock.After(l.visibility / 3):
		}
		l.mu.Lock()
		rc, err := l.queue.UpdateVisibility(ctx, l.id, l.receipt, l.visibility)
		switch {
		case err == nil:
			l.receipt = rc
		case errors.Is(err, storage.ErrLeaseLost) || errors.Is(err, storage.ErrNotFound):
			l.lost = true
			l.mu.Unlock()
			l.cancel(errLeaseLost)
			return
		}
		// Another error (a transient failure) leaves the lease as it is:
		// the next renewal may succeed, and the timeout has slack.
		held := l.held
		l.mu.Unlock()
		for _, h := range held {
			select {
			case <-l.stop:
				return
			default:
			}
			h.Renew(ctx)
		}
	}
}

// Release stops renewing and reports the message's current pop receipt
// and whether the lease was lost.
func (l *Lease) Release() (receipt string, lost bool) {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.receipt, l.lost
}

package pipeline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// tickClock fires a lease's renewal only when the test sends a tick.
type tickClock struct{ ticks chan time.Time }

func (c tickClock) Now() time.Time                       { return time.Now() }
func (c tickClock) After(time.Duration) <-chan time.Time { return c.ticks }

// renewQueue answers each renewal with the outcome the test sends: nil
// for a new receipt, or an error.
type renewQueue struct {
	storage.Queue
	outcomes chan error
	renewals atomic.Int64
}

func newRenewQueue() *renewQueue { return &renewQueue{outcomes: make(chan error)} }

func (q *renewQueue) UpdateVisibility(ctx context.Context, id, receipt string, d time.Duration) (string, error) {
	if err := <-q.outcomes; err != nil {
		return "", err
	}
	n := q.renewals.Add(1)
	return receipt + "+" + string(rune('0'+n)), nil
}

// renew fires one renewal with the given outcome.
func (q *renewQueue) renew(c tickClock, outcome error) {
	c.ticks <- time.Now()
	q.outcomes <- outcome
}

// TestLease drives a lease's timing with a clock of its own: each tick
// renews with the latest receipt; a renewal that finds the message taken
// over cancels the task's context with errLeaseLost; Release reports the
// last receipt and the loss.
func TestLease(t *testing.T) {
	clock := tickClock{ticks: make(chan time.Time)}
	q := newRenewQueue()
	lease, ctx := HoldLease(context.Background(), q, storage.Message{ID: "m", PopReceipt: "r"}, time.Minute, clock)
	q.renew(clock, nil)
	q.renew(clock, nil)
	q.renew(clock, errors.New("a transient failure keeps the lease"))
	select {
	case <-ctx.Done():
		t.Fatal("the task was cancelled while its lease held")
	default:
	}
	q.renew(clock, storage.ErrLeaseLost)
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), errLeaseLost) {
		t.Errorf("cause %v, want errLeaseLost", context.Cause(ctx))
	}
	receipt, lost := lease.Release()
	if !lost || receipt != "r+1+2" || q.renewals.Load() != 2 {
		t.Errorf("Release = %q, %v after %d renewals; want r+1+2, lost, 2", receipt, lost, q.renewals.Load())
	}
}

// TestLeaseReleaseStopsRenewing: after Release no tick is taken.
func TestLeaseReleaseStopsRenewing(t *testing.T) {
	clock := tickClock{ticks: make(chan time.Time)}
	q := newRenewQueue()
	lease, ctx := HoldLease(context.Background(), q, storage.Message{ID: "m", PopReceipt: "r"}, time.Minute, clock)
	q.renew(clock, nil)
	receipt, lost := lease.Release()
	if lost || receipt != "r+1" {
		t.Errorf("Release = %q, %v; want r+1, not lost", receipt, lost)
	}
	select {
	case clock.ticks <- time.Now():
		t.Error("a released lease took another tick")
	default:
	}
	if ctx.Err() != nil {
		t.Error("releasing a held lease cancelled the task")
	}
}

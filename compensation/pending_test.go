package compensation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

func open(t *testing.T) (storage.Queue, storage.Container) {
	t.Helper()
	be := teststore.Embedded(t)
	ctx := context.Background()
	q, c := be.Queue("work"), be.Container("blobs")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	return q, c
}

func queued(t *testing.T, q storage.Queue) int {
	t.Helper()
	n, err := q.ApproximateLength(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnqueueHidesTheMessageUntilDone(t *testing.T) {
	ctx := context.Background()
	q, _ := open(t)
	p, err := Enqueue(ctx, q, "X01-p01/e-000001", time.Hour, time.Minute, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Dequeue(ctx, 32, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 0 || queued(t, q) != 1 {
		t.Fatalf("dequeued %d messages of %d queued; want the one compensation message hidden", len(msgs), queued(t, q))
	}
	if err := p.Check(); err != nil {
		t.Errorf("Check within the delay: %v", err)
	}
	if err := p.Done(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queued(t, q); n != 0 {
		t.Errorf("%d messages left after Done", n)
	}
	// A second Done, as after a retried commit, finds it gone and is fine.
	if err := p.Done(ctx); err != nil {
		t.Errorf("second Done: %v", err)
	}
}

func TestCheckRefusesACommitPastTheDeadline(t *testing.T) {
	q, _ := open(t)
	// The margin takes the whole delay: the handler may run any moment.
	p, err := Enqueue(context.Background(), q, "X01-p01/e-000002", time.Second, time.Second, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if err := p.Check(); !errors.Is(err, ErrExpired) {
		t.Errorf("Check = %v, want ErrExpired", err)
	}
}

// TestRenewMovesTheDeadlineWithTheTask renews a message as a lease does,
// on a clock of the test's: a renewal before half the time to the
// deadline has passed changes nothing; once it has, the message is hidden for the whole delay
// again and the deadline moves with it, however long the task runs; a
// message past its deadline is never renewed; and after Done the
// renewals stop.
func TestRenewMovesTheDeadlineWithTheTask(t *testing.T) {
	ctx := context.Background()
	q, _ := open(t)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	const delay, margin = 4 * time.Minute, time.Minute
	p, err := Enqueue(ctx, q, "X01-p01/e-000001", delay, margin, now)
	if err != nil {
		t.Fatal(err)
	}
	receipt := p.receipt
	at = at.Add(time.Minute)
	p.Renew(ctx)
	if p.receipt != receipt {
		t.Fatal("renewed with three quarters of the delay left")
	}
	// An hour of renewals every 20 s, as a lease of one minute's
	// visibility makes them: the deadline never passes.
	for range 180 {
		at = at.Add(20 * time.Second)
		p.Renew(ctx)
		if err := p.Check(); err != nil {
			t.Fatalf("after %s: %v", at.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), err)
		}
	}
	if p.receipt == receipt {
		t.Fatal("never renewed")
	}
	// Renewed once half the time to its deadline has passed, it keeps
	// at least that, less one tick.
	if lo, hi := at.Add(delay/2-20*time.Second), at.Add(delay); p.surfaces.Before(lo) || p.surfaces.After(hi) {
		t.Errorf("surfaces at %s, want between %s and %s", p.surfaces, lo, hi)
	}
	// The queue's message is hidden: the renewals reached it.
	if msgs, err := q.Dequeue(ctx, 1, time.Minute); err != nil || len(msgs) != 0 {
		t.Fatalf("dequeued %d messages (%v); want the renewed message hidden", len(msgs), err)
	}
	// A task that stops renewing (its process paused) passes its
	// deadline; a renewal then does not revive it.
	at = at.Add(delay)
	renewed := p.receipt
	p.Renew(ctx)
	if err := p.Check(); !errors.Is(err, ErrExpired) || p.receipt != renewed {
		t.Errorf("past the deadline: Check = %v, renewed %v; want ErrExpired and no renewal", err, p.receipt != renewed)
	}
}

// TestRenewStopsOnceTheMessageIsGone: after Done, or once the message
// was taken (its pop receipt stale), renewals leave it alone and the
// commit is refused.
func TestRenewStopsOnceTheMessageIsGone(t *testing.T) {
	ctx := context.Background()
	q, _ := open(t)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	p, err := Enqueue(ctx, q, "X01-p01/e-000001", 4*time.Second, time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Delete(ctx, p.id, p.receipt); err != nil {
		t.Fatal(err)
	}
	at = at.Add(2 * time.Second)
	p.Renew(ctx)
	if err := p.Check(); !errors.Is(err, ErrExpired) {
		t.Errorf("Check after a renewal found the message gone = %v, want ErrExpired", err)
	}
}

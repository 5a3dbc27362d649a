package compensation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

func open(t *testing.T) (storage.Queue, storage.Container) {
	t.Helper()
	be, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
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

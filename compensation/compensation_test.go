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
	p, err := Enqueue(ctx, q, "X01-p01/e-000001", time.Hour, time.Minute)
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
	p, err := Enqueue(context.Background(), q, "X01-p01/e-000002", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if err := p.Check(); !errors.Is(err, ErrExpired) {
		t.Errorf("Check = %v, want ErrExpired", err)
	}
}

func TestHandle(t *testing.T) {
	errLive := errors.New("table unavailable")
	tests := []struct {
		name        string
		exists      bool
		live        bool
		liveErr     error
		wantDeleted bool
		wantErr     error
		wantBlob    bool
		wantCleanup bool
	}{
		{name: "orphan is deleted and cleaned up", exists: true, wantDeleted: true, wantCleanup: true},
		{name: "live blob is kept", exists: true, live: true, wantBlob: true},
		{name: "already deleted: a redelivery finishes quietly", wantDeleted: true, wantCleanup: true},
		{name: "liveness unknown: nothing is deleted", exists: true, liveErr: errLive, wantErr: errLive, wantBlob: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, c := open(t)
			if tc.exists {
				if err := c.Put(ctx, "p01/e-000003", []byte("entries")); err != nil {
					t.Fatal(err)
				}
			}
			cleaned := false
			deleted, err := Handle(ctx, c, "p01/e-000003",
				func(context.Context) (bool, error) { return tc.live, tc.liveErr },
				func(context.Context) error { cleaned = true; return nil })
			if deleted != tc.wantDeleted || !errors.Is(err, tc.wantErr) || cleaned != tc.wantCleanup {
				t.Errorf("deleted %v err %v cleanup %v; want %v %v %v", deleted, err, cleaned, tc.wantDeleted, tc.wantErr, tc.wantCleanup)
			}
			_, err = c.Get(ctx, "p01/e-000003")
			if exists := err == nil; exists != tc.wantBlob {
				t.Errorf("blob exists %v (err %v), want %v", exists, err, tc.wantBlob)
			}
		})
	}
}

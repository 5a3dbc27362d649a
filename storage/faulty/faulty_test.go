package faulty_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

func open(t *testing.T) storage.Backend {
	t.Helper()
	be := teststore.Embedded(t)
	if err := be.Container("blobs").Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return be
}

// TestModes strikes the second of three blob writes and checks, on the
// backend underneath, which writes happened and what the caller saw.
func TestModes(t *testing.T) {
	for _, tc := range []struct {
		mode      faulty.Mode
		written   [3]bool // blobs a, b, c exist afterwards
		errs      [3]error
		crashedAt bool
	}{
		{faulty.None, [3]bool{true, true, true}, [3]error{nil, nil, nil}, false},
		{faulty.FailBefore, [3]bool{true, false, true}, [3]error{nil, storage.ErrTransient, nil}, false},
		{faulty.FailAfter, [3]bool{true, true, true}, [3]error{nil, storage.ErrTransient, nil}, false},
		{faulty.CrashBefore, [3]bool{true, false, false}, [3]error{nil, faulty.ErrCrashed, faulty.ErrCrashed}, true},
		{faulty.CrashAfter, [3]bool{true, true, false}, [3]error{nil, faulty.ErrCrashed, faulty.ErrCrashed}, true},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			ctx := context.Background()
			inner := open(t)
			f := faulty.New(inner, faulty.Config{Mode: tc.mode, At: 2})
			for i, name := range []string{"a", "b", "c"} {
				err := f.Container("blobs").Put(ctx, name, []byte(name))
				if tc.errs[i] == nil && err != nil || tc.errs[i] != nil && !errors.Is(err, tc.errs[i]) {
					t.Errorf("put %s: %v, want %v", name, err, tc.errs[i])
				}
				_, err = inner.Container("blobs").Get(ctx, name)
				if exists := err == nil; exists != tc.written[i] {
					t.Errorf("blob %s exists: %v, want %v", name, exists, tc.written[i])
				}
			}
			if f.IsCrashed() != tc.crashedAt {
				t.Errorf("crashed %v, want %v", f.IsCrashed(), tc.crashedAt)
			}
			want := ""
			if tc.mode != faulty.None {
				want = "2 blob.put"
			}
			if f.Fired() != want || f.Calls() != 3-btoi(tc.crashedAt) {
				t.Errorf("fired %q after %d calls (%v)", f.Fired(), f.Calls(), f.Ops())
			}
		})
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestHeldAndDelayed checks the stand-ins for time: a crashed worker's
// message is released at once, an abandoned one on the next dequeue, and
// a delayed message surfaces on demand.
func TestHeldAndDelayed(t *testing.T) {
	ctx := context.Background()
	inner := open(t)
	q := inner.Queue("work")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		if _, err := q.Enqueue(ctx, text, storage.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := faulty.New(inner, faulty.Config{Mode: faulty.CrashAfter, At: 2, ReleaseAbandoned: true})
	fq := f.Queue("work")
	// Call 1 takes "one" and abandons it: the next dequeue releases it.
	if m, err := fq.Dequeue(ctx, 1, time.Hour); err != nil || len(m) != 1 || m[0].Text != "one" {
		t.Fatalf("first dequeue: %v, %v", m, err)
	}
	// Call 2 takes a message, "one" again or "two", and crashes after.
	if _, err := fq.Dequeue(ctx, 1, time.Hour); !errors.Is(err, faulty.ErrCrashed) {
		t.Fatalf("second dequeue: %v, want a crash", err)
	}
	if got, _ := q.Peek(ctx, 32); len(got) != 1 {
		t.Fatalf("%d messages visible after the crash, want 1 (the other is held)", len(got))
	}
	if err := f.ReleaseHeld(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Peek(ctx, 32); len(got) != 2 {
		t.Fatalf("%d messages visible after releasing the dead worker's, want 2", len(got))
	}

	g := faulty.New(inner, faulty.Config{})
	if _, err := g.Queue("work").Enqueue(ctx, "later", storage.EnqueueOptions{Delay: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Peek(ctx, 32); len(got) != 2 {
		t.Fatalf("%d messages visible with one delayed, want 2", len(got))
	}
	if err := g.SurfaceDelayed(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := q.Peek(ctx, 32); len(got) != 3 {
		t.Fatalf("%d messages visible after surfacing, want 3", len(got))
	}
}

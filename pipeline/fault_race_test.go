package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// TestStaleCompensationDuringRetry is the interleaving a compensation
// delay makes rare but cannot rule out: a worker dies just after writing
// a blob; the retry of its message writes its own output; and exactly
// between the retry's upload and its commit, the dead worker's
// compensation message surfaces and is handled. The handler sees no record
// naming the dead worker's blob and deletes it; the retry's output must
// survive that, or its records would name a blob that is gone and the ply
// could never be merged. Once for an expansion blob and once for a final
// merge output.
func TestStaleCompensationDuringRetry(t *testing.T) {
	cfg := RunConfig{Name: "stale", Config: runstore.Config{Board: 6, Target: 5, Sizes: runstore.Sizes{BlobPositions: 40, BucketBlobs: 2}}}
	ref, err := reference.Enumerate(board.MustNew(cfg.Board), cfg.Target)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		upload int    // which blob upload of the run the first worker dies after
		blob   string // what the stale compensation message names
	}{
		{"expansion", 1, "p01/e-"},
		{"merge", 2, "p01/f-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The call number of that upload, from a run without faults.
			k := uploadCall(ctx, t, cfg, tc.upload)

			inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			a := faulty.New(inner, faulty.Config{Mode: faulty.CrashAfter, At: k, ReleaseAbandoned: true})
			if _, err := faultWork(ctx, t, a, cfg, false, "a"); err != nil || !a.IsCrashed() {
				t.Fatalf("first worker: %v, crashed %v", err, a.IsCrashed())
			}
			if err := a.ReleaseHeld(ctx); err != nil {
				t.Fatal(err)
			}
			r, err := OpenRun(ctx, inner, cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			// The retry: just before its first commit after an upload,
			// the dead worker's compensation message surfaces and a third
			// worker handles it.
			var uploaded, handled bool
			stale := func(_ int64, op string) {
				switch {
				case op == "blob.upload":
					uploaded = true
				case op == "table.transact" && uploaded && !handled:
					handled = true
					if err := a.SurfaceDelayed(ctx); err != nil {
						t.Error(err)
						return
					}
					msgs, err := r.compensation.Dequeue(ctx, 1, time.Minute)
					if err != nil || len(msgs) != 1 || !strings.HasPrefix(msgs[0].Text, "X01-"+tc.blob) {
						t.Errorf("dequeued %+v, %v; want the stale compensation message for %s", msgs, err, tc.blob)
						return
					}
					h, err := NewWorker(r, faultWorker("h"), testLogger(t), nil)
					if err != nil {
						t.Error(err)
						return
					}
					h.handle(ctx, r.compensation, msgs[0])
				}
			}
			b := faulty.New(inner, faulty.Config{ReleaseAbandoned: true, Before: stale})
			if _, err := faultWork(ctx, t, b, cfg, true, "b"); err != nil {
				t.Fatal(err)
			}
			if !handled {
				t.Fatal("the retry never committed after an upload")
			}
			if ctx.Err() != nil {
				a, _ := r.Audit(context.Background())
				t.Fatalf("the run did not complete: %v", a.Findings)
			}
			if err := b.SurfaceDelayed(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := faultWork(ctx, t, faulty.New(inner, faulty.Config{}), cfg, true, "c"); err != nil {
				t.Fatal(err)
			}
			if err := checkRun(ctx, inner, cfg, ref); err != nil {
				t.Error(err)
			}
		})
	}
}

// uploadCall runs cfg without faults and returns the number of the call
// that is its n-th blob upload; the calls of one worker come in the same
// order on every run.
func uploadCall(ctx context.Context, t *testing.T, cfg RunConfig, n int) int64 {
	t.Helper()
	inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	f := faulty.New(inner, faulty.Config{})
	if _, err := faultWork(ctx, t, f, cfg, false, "a"); err != nil {
		t.Fatal(err)
	}
	for i, op := range f.Ops() {
		if op == "blob.upload" {
			if n--; n == 0 {
				return int64(i + 1)
			}
		}
	}
	t.Fatalf("the run makes fewer than %d uploads", n)
	return 0
}

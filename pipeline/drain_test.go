package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestDrainWaitsForCompensations: a worker told to drain does not exit on
// a complete run while a delayed compensation message is still to come,
// and handles it (deleting its orphaned blob) before it exits: on the
// compensation queue, and on the work queue, where a run seeded before
// the compensation queue existed has them.
func TestDrainWaitsForCompensations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue func(r *Run) storage.Queue
	}{
		{"compensation queue", func(r *Run) storage.Queue { return r.compensation }},
		{"work queue", func(r *Run) storage.Queue { return r.work }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			be := teststore.Embedded(t)
			cfg := RunConfig{Name: "drain", Config: runstore.Config{Board: 4, Target: 4}}
			if _, err := RunLocal(ctx, be, cfg, 1, WorkerConfig{PollMax: 20 * time.Millisecond}, testLogger(t), nil); err != nil {
				t.Fatal(err)
			}
			r, err := OpenRun(ctx, be, cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			// What a task that died after uploading leaves: an orphan and
			// its compensation message, still delayed.
			orphan := runstore.ExpansionBlobName(2, 0, "orphan")
			if err := r.blobs.Put(ctx, orphan, []byte("orphan")); err != nil {
				t.Fatal(err)
			}
			text := message.Message{Kind: message.KindCompensation, Ply: 2, Blob: orphan}.Format()
			if _, err := tc.queue(r).Enqueue(ctx, text, storage.EnqueueOptions{Delay: 300 * time.Millisecond, TTL: -1}); err != nil {
				t.Fatal(err)
			}
			w, err := NewWorker(r, WorkerConfig{Visibility: 5 * time.Second, ExitWhenDone: true, Drain: true, PollMax: 20 * time.Millisecond}, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			w.Run(ctx)
			if ctx.Err() != nil {
				t.Fatal("the worker did not exit")
			}
			if n, err := r.Queued(ctx); err != nil || n != 0 {
				t.Errorf("the queues hold %d messages (%v) after the worker exited", n, err)
			}
			if _, err := r.blobs.Get(ctx, orphan); err == nil {
				t.Error("the orphaned blob is still there")
			}
		})
	}
}

package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// TestStopFinishesTheHandling stops a worker while it handles a message
// that writes a blob (held at its first upload until the worker has been
// told to stop): the handling must run to its end and the message be
// deleted, not given back, and the worker must take no other message.
// Then other workers finish the run, which must be exact.
func TestStopFinishesTheHandling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := RunConfig{Name: "stopfinish", Config: runstore.Config{Board: 4, Target: 6, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 4}}}
	var (
		mu        sync.Mutex
		last      string // the ID of the work message dequeued last
		held      string // the message whose handling the upload held
		stopped   bool
		afterStop []storage.Operation // dequeues and deletes after Stop
		deleted   []string            // work messages deleted after Stop
	)
	reached, release := make(chan struct{}), make(chan struct{})
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		mu.Lock()
		if c.Op == storage.BlobUpload && held == "" && last != "" {
			held = last
			mu.Unlock()
			close(reached)
			<-release
			return next()
		}
		mu.Unlock()
		err := next()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case c.Op == storage.QueueDequeue && stopped:
			afterStop = append(afterStop, c.Op)
		case c.Op == storage.QueueDequeue && c.Resource == WorkQueue(cfg.Name) && len(c.Messages) > 0:
			last = c.Messages[0].ID
		case c.Op == storage.QueueDelete && stopped && c.Resource == WorkQueue(cfg.Name):
			deleted = append(deleted, c.Receipt.ID)
		}
		return err
	})
	r, wcfg, w := seedStopWorker(t, ctx, be, cfg)
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("no handling uploaded a blob")
	}
	mu.Lock()
	stopped = true
	mu.Unlock()
	w.Stop()
	close(release)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Run did not return after Stop")
	}
	mu.Lock()
	if len(afterStop) != 0 {
		t.Errorf("the worker dequeued %d times after Stop", len(afterStop))
	}
	if len(deleted) != 1 || deleted[0] != held {
		t.Errorf("after Stop the worker deleted %d work messages (%q first), want only the one it was handling, %q", len(deleted), deleted[:min(len(deleted), 3)], held)
	}
	mu.Unlock()

	finish4x4(t, ctx, r, wcfg, cfg.Target)
}

// TestCancelAfterTheHandlerDeletes cancels a worker's context (SIGTERM
// without -finish-within) the moment a handler has returned without
// error, before the worker deletes the message: the work is done, so the
// message must still be deleted, not left to reappear and be done again.
// Other workers then finish the run, which must be exact.
func TestCancelAfterTheHandlerDeletes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := RunConfig{Name: "canceldel", Config: runstore.Config{Board: 4, Target: 6, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 4}}}
	var (
		mu      sync.Mutex
		deleted = map[string]bool{} // work messages deleted
	)
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		if err == nil && c.Op == storage.QueueDelete && c.Resource == WorkQueue(cfg.Name) {
			mu.Lock()
			deleted[c.Receipt.ID] = true
			mu.Unlock()
		}
		return err
	})
	r, wcfg, w := seedStopWorker(t, ctx, be, cfg)
	// The first handling that succeeds stops the worker as it returns.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var handled string
	w.handler = chain(task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
		err := route(ctx, t, m)
		if err == nil && handled == "" {
			handled = t.Msg.ID
			stop()
		}
		return err
	}), recoverPanics, billByKind, checkPly)
	w.Run(runCtx)
	if handled == "" {
		t.Fatal("no handling succeeded")
	}
	mu.Lock()
	if !deleted[handled] {
		t.Errorf("message %s, handled before the worker was stopped, was not deleted", handled)
	}
	mu.Unlock()
	finish4x4(t, ctx, r, wcfg, cfg.Target)
}

// finish4x4 has two more workers finish a 4x4 run to ply target, and
// checks it against the reference.
func finish4x4(t *testing.T, ctx context.Context, r *Run, wcfg WorkerConfig, target int) {
	t.Helper()
	var wg sync.WaitGroup
	for range 2 {
		w, err := NewWorker(r, wcfg, testLogger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { w.Run(ctx) })
	}
	wg.Wait()
	rep, err := r.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, target)
}

// seedStopWorker seeds cfg on be and makes the worker the stop tests
// stop, with the configuration they finish the run with.
func seedStopWorker(t *testing.T, ctx context.Context, be storage.Backend, cfg RunConfig) (*Run, WorkerConfig, *Worker) {
	t.Helper()
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := WorkerConfig{Visibility: 5 * time.Second, ExitWhenDone: true, PollMax: 20 * time.Millisecond}
	w, err := NewWorker(r, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, wcfg, w
}

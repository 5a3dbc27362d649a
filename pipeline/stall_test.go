package pipeline

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// tornBackend is a backend whose work queue counts no message the first
// time it is counted, whatever it holds: what a count of a sharded queue
// finds when it reads each shard at the wrong moment (stall.go).
type tornBackend struct {
	storage.Backend
	work string
	once *sync.Once
}

func (b tornBackend) Queue(name string) storage.Queue {
	q := b.Backend.Queue(name)
	if name != b.work {
		return q
	}
	return tornQueue{q, b.once}
}

type tornQueue struct {
	storage.Queue
	once *sync.Once
}

func (q tornQueue) ApproximateLength(ctx context.Context) (int, error) {
	torn := false
	q.once.Do(func() { torn = true })
	if torn {
		return 0, nil
	}
	return q.Queue.ApproximateLength(ctx)
}

// TestTornCountDoesNotNudge has worker b find the work queue empty once
// while worker a holds the run's only message (its handling held at its
// first blob upload): a count that missed a message, as a sharded
// queue's count can. b must not take that for a stall and enqueue
// scans (which double the merges under way): its second count finds the
// message. Then both finish the run, exactly.
func TestTornCountDoesNotNudge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := RunConfig{Name: "torncount", Config: runstore.Config{Board: 4, Target: 6, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 4}}}
	inner := teststore.Embedded(t)

	var holdOnce, decideOnce sync.Once
	held, release, decided := make(chan struct{}), make(chan struct{}), make(chan struct{})
	beA := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		if c.Op == storage.BlobUpload {
			first := false
			holdOnce.Do(func() { first = true })
			if first {
				close(held)
				<-release
			}
		}
		return next()
	})
	// b decides once it counts again (the fix) or enqueues (a nudge).
	counts := 0
	var mu sync.Mutex
	beB := storage.Wrap(tornBackend{inner, WorkQueue(cfg.Name), new(sync.Once)}, func(c *storage.Call, next func() error) error {
		err := next()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case c.Op == storage.QueueEnqueue && strings.HasPrefix(c.Resource, WorkQueue(cfg.Name)):
			decideOnce.Do(func() { close(decided) })
		case c.Op == storage.QueueApproximateLength && strings.HasPrefix(c.Resource, WorkQueue(cfg.Name)):
			if counts++; counts > 1 {
				decideOnce.Do(func() { close(decided) })
			}
		}
		return err
	})

	ra, err := Seed(ctx, beA, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := WorkerConfig{Visibility: 10 * time.Minute, ExitWhenDone: true, PollMin: time.Millisecond, PollMax: 20 * time.Millisecond}
	wa, err := NewWorker(ra, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { wa.Run(ctx) })
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("a's handling uploaded no blob")
	}

	rb, err := OpenRun(ctx, beB, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	wb, err := NewWorker(rb, wcfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { wb.Run(ctx) })
	select {
	case <-decided:
	case <-ctx.Done():
		t.Fatal("b neither counted the queue again nor enqueued")
	}
	close(release)
	wg.Wait()

	if strings.Contains(logs.String(), "enqueued a scan") {
		t.Errorf("b took a count that missed a message for a stall:\n%s", logs.String())
	}
	rep, err := ra.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)
}

// TestAuditOfAMovingRun audits a seeded run whose work queue is empty
// while ply 1 starts merging during the audit, as a count that missed a
// moving message would show a live run: the audit must not call it
// stalled. Audited again, with nothing moving, it must.
func TestAuditOfAMovingRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inner := teststore.Embedded(t)
	cfg := RunConfig{Name: "auditmoving", Config: runstore.Config{Board: 4, Target: 12}}
	seeded, err := Seed(ctx, inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, ctx, seeded.work)
	var once sync.Once
	be := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		err := next()
		if c.Op == storage.QueueApproximateLength && strings.HasPrefix(c.Resource, WorkQueue(cfg.Name)) {
			once.Do(func() {
				p, perr := seeded.store.Ply(ctx, 1)
				if perr == nil {
					now := time.Now()
					perr = seeded.store.StartMerging(ctx, p, runstore.Claim{Owner: "test", Now: now, Until: now.Add(time.Minute)})
				}
				if perr != nil {
					t.Errorf("moving ply 1: %v", perr)
				}
			})
		}
		return err
	})
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	const stalled = "error: the run is not complete but its work queue is empty: nothing is left to make progress"
	if got, _ := auditLines(t, ctx, r); slices.Contains(got, stalled) {
		t.Errorf("a run whose ply moved during the audit was found stalled: %q", got)
	}
	if got, _ := auditLines(t, ctx, r); !slices.Contains(got, stalled) {
		t.Errorf("a still run with an empty queue: findings %q, want %q among them", got, stalled)
	}
}

package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// TestInterruptedRunContinues stops a local run on the persistent
// embedded backend part way, closes it as a process would at Ctrl-C, and
// continues it in a fresh backend over the same directory: the counts and
// results come out exact, and the audit is clean.
func TestInterruptedRunContinues(t *testing.T) {
	dir := t.TempDir()
	cfg := RunConfig{Name: "resume", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 200, BucketBlobs: 4}}}
	wcfg := WorkerConfig{Visibility: time.Second, PollMax: 50 * time.Millisecond}
	for _, stopAfter := range []int64{3, 40} {
		be, err := embedded.Open(embedded.Config{Dir: dir, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		progress := &Progress{}
		go func() {
			for progress.Tasks.Load() < stopAfter && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err = RunLocal(ctx, be, cfg, 2, wcfg, testLogger(t), progress)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stopping after %d tasks: %v, want the run cut short", stopAfter, err)
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
	be, err := embedded.Open(embedded.Config{Dir: dir, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := RunLocal(ctx, be, cfg, 2, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Root != "white" || len(rep.Plies) != len(testkit.Ref4x4) {
		t.Fatalf("complete %v root %s plies %d", rep.Complete, rep.Root, len(rep.Plies))
	}
	for i, p := range rep.Plies {
		if got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}; got != testkit.Ref4x4[i] {
			t.Errorf("ply %d: %v, want %v", i, got, testkit.Ref4x4[i])
		}
	}
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	// Messages the interrupted processes left in flight reappear after
	// their visibility timeout, and their compensation messages after the
	// compensation delay; the continued run can finish before either. A
	// fleet handles them when they surface: do that, then audit.
	w, err := NewWorker(r, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(wcfg.WithDefaults().CompensationDelay + 5*time.Second); ; {
		n, err := r.Queued(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || time.Now().After(deadline) {
			break
		}
		wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		w.Run(wctx)
		wcancel()
	}
	audit, err := r.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if audit.Failed() {
		t.Errorf("audit after continuing: %v", audit.Findings)
	}
}

package runstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestResumeRunSeededBefore resumes runs seeded by earlier releases:
// a run whose settings row is version 1, as every run seeded before the
// completion tree has it, and one of version 4, as every run seeded
// before the tree's fan-out of 8. Each is seeded, its settings made those
// of the earlier release, then worked on until a third of its messages
// are handled and stopped in the middle of its tasks, then run to the end
// by a new set of workers. It must finish exactly (docs/reference.md),
// read its settings as the release that seeded it wrote them, and count
// its stages so to the end: groups of 64, their markers in the base
// partition (flat) or in the tree's first level, where the earlier
// release's workers left them.
func TestResumeRunSeededBefore(t *testing.T) {
	for _, tc := range []struct {
		version    int
		completion runstore.Completion
	}{{1, runstore.FlatCompletion}, {4, runstore.WideTreeCompletion}} {
		t.Run(fmt.Sprint("version ", tc.version), func(t *testing.T) { resumeSeededBefore(t, tc.version, tc.completion) })
	}
}

func resumeSeededBefore(t *testing.T, version int, completion runstore.Completion) {
	ctx := context.Background()
	var handled atomic.Int64
	stop := make(chan struct{})
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		switch {
		case err != nil:
		case c.Op == storage.QueueDequeue && handled.Add(int64(len(c.Messages))) >= 300 && handled.Load()-int64(len(c.Messages)) < 300:
			close(stop)
		}
		return err
	})
	// Blobs of 4 positions make more than 64 tasks, buckets and final
	// blobs a ply, so that stages have several completion groups, over
	// three partitions.
	cfg := pipeline.RunConfig{Name: "older", Config: runstore.Config{Board: 4, Target: 12,
		Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 2}, PartitionShards: 3}}
	if _, err := pipeline.Seed(ctx, be, cfg); err != nil {
		t.Fatal(err)
	}
	state := be.Table(pipeline.StateTable(cfg.Name))
	if err := runstore.AsVersion(ctx, state, version); err != nil {
		t.Fatal(err)
	}
	wcfg := pipeline.WorkerConfig{Visibility: time.Second, PollMax: 50 * time.Millisecond}
	r, err := pipeline.OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Completion != completion {
		t.Fatalf("a version %d settings row reads as completion %q, want %q", version, r.Config.Completion, completion)
	}
	part, cancel := context.WithCancel(ctx)
	go func() { <-stop; cancel() }()
	var wg sync.WaitGroup
	for range 3 {
		w, err := pipeline.NewWorker(r, wcfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(part) }()
	}
	wg.Wait()
	if done, err := r.Report(ctx); err != nil || done.Complete {
		t.Fatalf("the first part finished the run (%v): it must stop half way", err)
	}
	rep, err := pipeline.RunLocal(ctx, be, cfg, 3, wcfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Plies {
		if got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}; got != testkit.Ref4x4[i] {
			t.Errorf("ply %d: got %v, want %v", i, got, testkit.Ref4x4[i])
		}
	}
	if !rep.Complete || len(rep.Plies) != len(testkit.Ref4x4) {
		t.Errorf("complete %v with %d plies, want %d", rep.Complete, len(rep.Plies), len(testkit.Ref4x4))
	}
	store := runstore.New(board.MustNew(4), []storage.Table{state}, []storage.Table{be.Table(pipeline.BackTables(cfg.Name, 1)[0])}, 3, completion)
	p, err := store.Ply(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := runstore.ResolutionGroups(ctx, state, 7, completion, 3)
	if want := (p.Finals + 63) / 64; err != nil || want < 2 || groups != want {
		t.Errorf("%d group markers of ply 7's resolutions (%v), want one for each of its %d groups of 64 final blobs (counted %s)", groups, err, want, completion)
	}
	if c, err := runstore.ReadConfig(ctx, state); err != nil || c.Completion != completion {
		t.Errorf("after the run, its settings read as completion %q (%v), want %q", c.Completion, err, completion)
	}
}

package runstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestResumeRunSeededBefore resumes a run whose settings row is version 1,
// as every run seeded before the completion tree has it: seeded, its
// settings made those of the earlier release, then worked on until a
// third of its messages are handled and stopped in the middle of its
// tasks, then run to the end by a new set of workers. It must finish
// exactly (docs/reference.md), read its settings as flat completion, and
// count its stages flat to the end: group markers in the base partition,
// where the earlier release's workers left them.
func TestResumeRunSeededBefore(t *testing.T) {
	ctx := context.Background()
	var handled atomic.Int64
	var groups atomic.Int64 // rows added to ply 7's resolutions' base partition
	stop := make(chan struct{})
	be := storage.Wrap(testkit.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		switch {
		case err != nil:
		case c.Op == storage.QueueDequeue && handled.Add(int64(len(c.Messages))) >= 300 && handled.Load()-int64(len(c.Messages)) < 300:
			close(stop)
		case c.Op == storage.TableAdd && c.Partition == runstore.GroupPartition(7):
			groups.Add(1)
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
	if err := runstore.AsVersion1(ctx, state); err != nil {
		t.Fatal(err)
	}
	wcfg := pipeline.WorkerConfig{Visibility: time.Second, PollMax: 50 * time.Millisecond}
	r, err := pipeline.OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Completion != runstore.FlatCompletion {
		t.Fatalf("a version 1 settings row reads as completion %q, want %q", r.Config.Completion, runstore.FlatCompletion)
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
	store := runstore.New(board.MustNew(4), []storage.Table{state}, []storage.Table{be.Table(pipeline.BackTables(cfg.Name, 1)[0])}, 3, runstore.FlatCompletion)
	p, err := store.Ply(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(p.Finals+63) / 64; want < 2 || groups.Load() != want {
		t.Errorf("%d group markers of ply 7's resolutions in their base partition, want one for each of its %d groups of final blobs (counted flat)", groups.Load(), want)
	}
	if c, err := runstore.ReadConfig(ctx, state); err != nil || c.Completion != runstore.FlatCompletion {
		t.Errorf("after the run, its settings read as completion %q (%v), want %q", c.Completion, err, runstore.FlatCompletion)
	}
}

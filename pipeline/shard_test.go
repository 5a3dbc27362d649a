package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/storage"
)

// TestShardedWorkQueue: a run whose work queue has three shards is exact,
// every shard carries work both ways, and the run's queue count and drop
// cover every shard.
func TestShardedWorkQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	enqueued, dequeued := map[string]int{}, map[string]int{}
	be := storage.Wrap(openEmbedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
		case c.Op == storage.QueueEnqueue:
			enqueued[c.Resource]++
		case c.Op == storage.QueueDequeue:
			dequeued[c.Resource] += len(c.Messages)
		}
		return err
	})
	cfg := RunConfig{Name: "sharded", Board: 4, Target: 12, BlobPositions: 20, BucketBlobs: 2, QueueShards: 3}
	rep, err := RunLocal(ctx, be, cfg, 4, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Plies {
		got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}
		if got != testkit.Ref4x4[i] {
			t.Errorf("ply %d: got %v, want %v", i, got, testkit.Ref4x4[i])
		}
	}
	shards := WorkQueues(cfg.Name, 3)
	if len(shards) != 3 || shards[0] != WorkQueue(cfg.Name) {
		t.Fatalf("shards %v", shards)
	}
	for _, q := range shards {
		if enqueued[q] == 0 || dequeued[q] == 0 {
			t.Errorf("shard %s: %d messages enqueued, %d dequeued; want some of each", q, enqueued[q], dequeued[q])
		}
	}
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.QueueShards != 3 {
		t.Errorf("reopened with %d queue shards, want 3", r.Config.QueueShards)
	}
	if n, err := r.Queued(ctx); err != nil || n != 0 {
		t.Errorf("%d messages left, %v", n, err)
	}
	if err := r.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range shards {
		if _, err := be.Queue(q).ApproximateLength(ctx); err == nil {
			t.Errorf("shard %s is still there after Drop", q)
		}
	}
}

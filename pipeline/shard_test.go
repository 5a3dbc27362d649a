package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestShardedRun: a run whose work queue has three shards, whose
// numbered rows are spread over three partitions of each kind, and whose
// state and backtracking rows are spread over the tables of two accounts
// (here both in one backend), is exact; every queue shard carries work
// both ways, every compensation queue shard covers outputs (their
// messages enqueued and deleted), every partition shard, state table
// and backtracking table gets rows, and the run's queue count and drop
// cover every shard.
func TestShardedRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	enqueued, dequeued, deleted, written, tables := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
		case c.Op == storage.QueueEnqueue:
			enqueued[c.Resource]++
		case c.Op == storage.QueueDequeue:
			dequeued[c.Resource] += len(c.Messages)
		case c.Op == storage.QueueDelete:
			deleted[c.Resource]++
		case c.Op == storage.TableAdd || c.Op == storage.TableTransact:
			written[c.Partition]++
			tables[c.Resource]++
		}
		return err
	})
	// Blobs of 4 positions make more than 64 tasks, buckets and final
	// blobs a ply, so their completion groups fall in every shard.
	cfg := RunConfig{Name: "sharded", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 2}, QueueShards: 3, PartitionShards: 3, Accounts: 2}}
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
	// Work messages are taken off the work queue's shards; compensation
	// messages are deleted once their outputs are committed.
	shards, comp := WorkQueues(cfg.Name, 3), CompensationQueues(cfg.Name, 3)
	for _, qs := range []struct {
		names []string
		first string
		out   map[string]int
		outBy string
	}{{shards, WorkQueue(cfg.Name), dequeued, "dequeued"}, {comp, CompensationQueue(cfg.Name), deleted, "deleted"}} {
		if len(qs.names) != 3 || qs.names[0] != qs.first {
			t.Fatalf("shards %v", qs.names)
		}
		for _, q := range qs.names {
			if enqueued[q] == 0 || qs.out[q] == 0 {
				t.Errorf("shard %s: %d messages enqueued, %d %s; want some of each", q, enqueued[q], qs.out[q], qs.outBy)
			}
		}
	}
	// Ply 7 of 4x4 has 666 positions (docs/reference.md): 167 final
	// blobs, three completion groups, and as many resolutions and
	// expansion tasks of ply 8. The completion markers lie with the
	// markers they count, so the base partitions take none.
	for _, pk := range []string{"f07-00", "f07-01", "f07-02", "v07-00", "v07-01", "v07-02", "r08-00", "r08-01", "r08-02"} {
		if written[pk] == 0 {
			t.Errorf("no rows written to partition %s", pk)
		}
	}
	for _, pk := range []string{"r08", "v07"} {
		if written[pk] != 0 {
			t.Errorf("%d rows written to base partition %s", written[pk], pk)
		}
	}
	for _, name := range append(StateTables(cfg.Name, 2), BackTables(cfg.Name, 2)...) {
		if tables[name] == 0 {
			t.Errorf("no rows written to table %s: %v", name, tables)
		}
	}
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Config; c.QueueShards != 3 || c.CompensationShards != 3 || c.PartitionShards != 3 || c.Accounts != 2 || c.StateAccounts != 2 {
		t.Errorf("reopened with %d queue shards, %d compensation shards, %d partition shards, %d accounts and state rows on %d, want 3, 3, 3, 2 and 2", c.QueueShards, c.CompensationShards, c.PartitionShards, c.Accounts, c.StateAccounts)
	}
	if n, err := r.Queued(ctx); err != nil || n != 0 {
		t.Errorf("%d messages left, %v", n, err)
	}
	if err := r.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(shards, comp...) {
		if _, err := be.Queue(q).ApproximateLength(ctx); err == nil {
			t.Errorf("shard %s is still there after Drop", q)
		}
	}
}

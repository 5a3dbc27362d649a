package shardedqueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

const shards = 3

// shardedBackend hands out queues of three shards each.
type shardedBackend struct{ storage.Backend }

func shardNames(name string) []string {
	return []string{name, name + "-1", name + "-2"}
}

func (b shardedBackend) Queue(name string) storage.Queue {
	var qs []storage.Queue
	for _, n := range shardNames(name) {
		qs = append(qs, b.Backend.Queue(n))
	}
	q, err := shardedqueue.New(name, qs)
	if err != nil {
		panic(err)
	}
	return q
}

func openEmbedded(t *testing.T) *embedded.Backend {
	b, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConformance: a sharded queue keeps every promise of a storage
// queue that the conformance suite checks.
func TestConformance(t *testing.T) {
	storagetest.RunQueues(t, func(t *testing.T) storage.Backend { return shardedBackend{openEmbedded(t)} })
}

// TestSpreadAndRoute: messages spread over every shard, each ID routes
// back to its shard, and a foreign ID is not found.
func TestSpreadAndRoute(t *testing.T) {
	ctx := context.Background()
	be := openEmbedded(t)
	defer be.Close()
	q := shardedBackend{be}.Queue("work")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		if _, err := q.Enqueue(ctx, fmt.Sprintf("C%02d-%d", i%13, i), storage.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range shardNames("work") {
		got, err := be.Queue(name).ApproximateLength(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// An even spread puts 100 in each; a hash far off that is broken.
		if got < n/shards/2 || got > 2*n/shards {
			t.Errorf("shard %s holds %d of %d messages", name, got, n)
		}
	}
	if got, err := q.ApproximateLength(ctx); err != nil || got != n {
		t.Fatalf("length %d, %v; want %d", got, err, n)
	}
	seen := map[string]bool{}
	for {
		msgs, err := q.Dequeue(ctx, storage.MaxDequeue, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if seen[m.Text] {
				t.Fatalf("%s delivered twice", m.Text)
			}
			seen[m.Text] = true
			if err := q.Delete(ctx, m.ID, m.PopReceipt); err != nil {
				t.Fatalf("delete of %s: %v", m.ID, err)
			}
			if err := q.Delete(ctx, m.ID, m.PopReceipt); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("second delete of %s: %v, want not found", m.ID, err)
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("dequeued %d of %d", len(seen), n)
	}
	for _, id := range []string{"x", "3.abc", "-1.abc", "01.abc", "abc"} {
		if err := q.Delete(ctx, id, "r"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("delete of id %q: %v, want not found", id, err)
		}
	}
}

// TestOneShardIsTheQueue: a single shard is returned as it is, so a run
// of one shard keeps its queue's own message IDs.
func TestOneShardIsTheQueue(t *testing.T) {
	be := openEmbedded(t)
	defer be.Close()
	q := be.Queue("work")
	got, err := shardedqueue.New("work", []storage.Queue{q})
	if err != nil || got != q {
		t.Fatalf("New of one shard: %v, %v", got, err)
	}
	if _, err := shardedqueue.New("work", nil); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("New of no shards: %v, want invalid", err)
	}
}

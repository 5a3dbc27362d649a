package shardedqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

// shards is more than Probes and not a multiple of it, so that one
// Dequeue asks only some shards and the rotation wraps mid-window.
const shards = 5

// polls is how many consecutive Dequeues ask every shard.
const polls = (shards + shardedqueue.Probes - 1) / shardedqueue.Probes

// shardedBackend hands out queues of n shards each (shards if n is 0).
type shardedBackend struct {
	storage.Backend
	n      int
	probes int // 0: shardedqueue.New's
}

func shardNames(name string, n int) []string {
	names := []string{name}
	for i := 1; i < n; i++ {
		names = append(names, fmt.Sprintf("%s-%d", name, i))
	}
	return names
}

func (b shardedBackend) Queue(name string) storage.Queue {
	n := b.n
	if n == 0 {
		n = shards
	}
	var qs []storage.Queue
	for _, sn := range shardNames(name, n) {
		qs = append(qs, b.Backend.Queue(sn))
	}
	q, err := shardedqueue.New(name, qs)
	if b.probes > 0 {
		q, err = shardedqueue.NewProbing(name, qs, b.probes)
	}
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
	storagetest.RunQueues(t, func(t *testing.T) storage.Backend { return shardedBackend{Backend: openEmbedded(t)} }, polls)
}

// TestSpreadAndRoute: messages spread over every shard, each ID routes
// back to its shard, and a foreign ID is not found.
func TestSpreadAndRoute(t *testing.T) {
	ctx := context.Background()
	be := openEmbedded(t)
	defer be.Close()
	q := shardedBackend{Backend: be}.Queue("work")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		if _, err := q.Enqueue(ctx, fmt.Sprintf("C%02d-%d", i%13, i), storage.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range shardNames("work", shards) {
		got, err := be.Queue(name).ApproximateLength(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// An even spread puts n/shards in each; a hash far off that is broken.
		if got < n/shards/2 || got > 2*n/shards {
			t.Errorf("shard %s holds %d of %d messages", name, got, n)
		}
	}
	if got, err := q.ApproximateLength(ctx); err != nil || got != n {
		t.Fatalf("length %d, %v; want %d", got, err, n)
	}
	seen := map[string]bool{}
	// One empty Dequeue asks only some shards: the queue is drained once
	// polls of them in a row found nothing.
	for empty := 0; empty < polls; {
		msgs, err := q.Dequeue(ctx, storage.MaxDequeue, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			empty++
			continue
		}
		empty = 0
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
	for _, id := range []string{"x", fmt.Sprintf("%d.abc", shards), "-1.abc", "01.abc", "abc"} {
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
	if _, err := shardedqueue.NewProbing("work", []storage.Queue{q, be.Queue("work-1")}, 0); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("NewProbing of no probes: %v, want invalid", err)
	}
}

// TestFindsEveryShard: a message in any one shard of many is found
// within ceil(shards/Probes) Dequeues, wherever the queue's rotation
// starts, and its ID routes back to that shard.
func TestFindsEveryShard(t *testing.T) {
	ctx := context.Background()
	be := openEmbedded(t)
	defer be.Close()
	const many = 9
	const bound = (many + shardedqueue.Probes - 1) / shardedqueue.Probes
	for shard, name := range shardNames("lone", many) {
		t.Run(name, func(t *testing.T) {
			q := shardedBackend{Backend: be, n: many}.Queue("lone")
			if err := q.Create(ctx); err != nil {
				t.Fatal(err)
			}
			defer q.Drop(ctx)
			// Straight into the shard, as if another process's hash sent it there.
			if _, err := be.Queue(name).Enqueue(ctx, "lone", storage.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
			for poll := 1; ; poll++ {
				if poll > bound {
					t.Fatalf("message in shard %d not found in %d polls", shard, bound)
				}
				msgs, err := q.Dequeue(ctx, 1, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) == 0 {
					continue
				}
				if want := fmt.Sprintf("%d.", shard); len(msgs) != 1 || msgs[0].Text != "lone" || !strings.HasPrefix(msgs[0].ID, want) {
					t.Fatalf("poll %d: got %+v, want the message with an ID starting %s", poll, msgs, want)
				}
				if err := q.Delete(ctx, msgs[0].ID, msgs[0].PopReceipt); err != nil {
					t.Fatalf("delete: %v", err)
				}
				return
			}
		})
	}
}

// TestPollCalls: a Dequeue of an empty queue of 64 shards makes exactly
// its probes' calls (Probes, or one for NewProbing's of one),
// consecutive polls ask every shard once before any twice, and a
// Dequeue whose first shard has a message makes one call.
func TestPollCalls(t *testing.T) {
	for _, probes := range []int{shardedqueue.Probes, 1} {
		t.Run(fmt.Sprintf("probes=%d", probes), func(t *testing.T) { pollCalls(t, probes) })
	}
}

func pollCalls(t *testing.T, probes int) {
	ctx := context.Background()
	const many = 64
	var calls map[string]int
	be := storage.Wrap(openEmbedded(t), func(c *storage.Call, next func() error) error {
		if c.Op == storage.QueueDequeue {
			calls[c.Resource]++
		}
		return next()
	})
	defer be.Close()
	q := shardedBackend{Backend: be, n: many, probes: probes}.Queue("idle")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	calls = map[string]int{}
	for poll := 1; poll <= many/probes; poll++ {
		msgs, err := q.Dequeue(ctx, storage.MaxDequeue, time.Minute)
		if err != nil || len(msgs) != 0 {
			t.Fatalf("poll of an empty queue: %v, %v", msgs, err)
		}
		total := 0
		for _, n := range calls {
			total += n
		}
		if total != poll*probes {
			t.Fatalf("%d polls of an empty queue made %d calls, want %d", poll, total, poll*probes)
		}
	}
	for _, name := range shardNames("idle", many) {
		if calls[name] != 1 {
			t.Errorf("%d polls asked shard %s %d times, want once: %v", many/probes, name, calls[name], calls)
		}
	}
	// Two messages in every shard: whichever shard a poll starts at has one.
	for _, name := range shardNames("idle", many) {
		for range 2 {
			if _, err := be.Queue(name).Enqueue(ctx, "busy", storage.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	calls = map[string]int{}
	for range many {
		if msgs, err := q.Dequeue(ctx, 1, time.Minute); err != nil || len(msgs) != 1 {
			t.Fatalf("poll of a full queue: %v, %v", msgs, err)
		}
	}
	if len(calls) != many {
		t.Errorf("%d polls of a full queue asked %d shards, want every one once: %v", many, len(calls), calls)
	}
	for name, n := range calls {
		if n != 1 {
			t.Errorf("%d polls of a full queue asked shard %s %d times, want once", many, name, n)
		}
	}
}

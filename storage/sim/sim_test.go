package sim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/sim"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		b, err := sim.Open(sim.Config{Dir: t.TempDir(), Latency: 100 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []sim.Config{{Latency: -1}, {Bandwidth: -1}, {MaxWait: -1}} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
		if _, err := sim.Open(cfg); err == nil {
			t.Errorf("%+v: Open: no error", cfg)
		}
	}
	d := sim.Config{}.WithDefaults()
	if d.Latency != sim.DefaultLatency || d.Bandwidth != sim.DefaultBandwidth || d.MaxWait != sim.DefaultMaxWait {
		t.Errorf("defaults: %+v", d)
	}
}

// clock is a fake clock that stands still: a sleep is recorded, not
// waited for, and does not refill the throttle's buckets.
type clock struct {
	mu     sync.Mutex
	slept  time.Duration
	sleeps int
}

func (c *clock) Now() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept += d
	c.sleeps++
	return ctx.Err()
}

func (c *clock) take() (time.Duration, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, n := c.slept, c.sleeps
	c.slept, c.sleeps = 0, 0
	return d, n
}

// open returns a simulated account with 10 ms of latency and 1 MB/s of
// bandwidth on a standing clock, its embedded store (to write behind the
// account's back), and the clock, with a container, a queue and a table.
func open(t *testing.T, maxWait time.Duration) (*sim.Backend, storage.Backend, *clock) {
	t.Helper()
	inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, err := range []error{inner.Container("blobs").Create(ctx), inner.Queue("work").Create(ctx), inner.Table("tab").Create(ctx)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	c := &clock{}
	b, err := sim.Over(inner, sim.Config{Latency: 10 * time.Millisecond, Bandwidth: 1_000_000, MaxWait: maxWait, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, inner, c
}

// TestLatency: every call waits the latency; a blob call its bytes at
// the bandwidth besides (1 MB/s: a millisecond a kilobyte).
func TestLatency(t *testing.T) {
	b, inner, c := open(t, time.Second)
	ctx := context.Background()
	data := make([]byte, 5000)
	if err := inner.Container("blobs").Put(ctx, "stored", data); err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		call func() error
		want time.Duration
	}{
		{"enqueue", func() error { _, err := b.Queue("work").Enqueue(ctx, "hello", storage.EnqueueOptions{}); return err }, 10 * ms},
		{"dequeue", func() error { _, err := b.Queue("work").Dequeue(ctx, 1, time.Minute); return err }, 10 * ms},
		{"upsert", func() error {
			_, err := b.Table("tab").Upsert(ctx, storage.Entity{PartitionKey: "p", RowKey: "r"})
			return err
		}, 10 * ms},
		{"get entity", func() error { _, err := b.Table("tab").Get(ctx, "p", "r"); return err }, 10 * ms},
		{"put 2 kB", func() error { return b.Container("blobs").Put(ctx, "two", make([]byte, 2000)) }, 12 * ms},
		{"upload 3 kB", func() error {
			return b.Container("blobs").Upload(ctx, "three", io.LimitReader(zeros{}, 3000))
		}, 13 * ms},
		{"get 5 kB", func() error { _, err := b.Container("blobs").Get(ctx, "stored"); return err }, 15 * ms},
		{"open and read 5 kB", func() error {
			rc, err := b.Container("blobs").Open(ctx, "stored", 0, -1)
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.Copy(io.Discard, rc)
			return err
		}, 15 * ms},
		{"list", func() error { _, err := b.Container("blobs").List(ctx, ""); return err }, 10 * ms},
	} {
		c.take()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Rounding of the bandwidth's waits: within a microsecond.
		if got, _ := c.take(); got < tc.want-time.Microsecond || got > tc.want+time.Microsecond {
			t.Errorf("%s waited %v, want %v", tc.name, got, tc.want)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestLatencyCancelled: a call whose context ends while it waits is not
// performed.
func TestLatencyCancelled(t *testing.T) {
	b, inner, _ := open(t, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Queue("work").Enqueue(ctx, "lost", storage.EnqueueOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("enqueue: %v, want context.Canceled", err)
	}
	if n, err := inner.Queue("work").ApproximateLength(context.Background()); err != nil || n != 0 {
		t.Fatalf("queue holds %d messages (%v), want 0", n, err)
	}
}

// TestThrottled: a table partition takes 2,000 entities a second, counted
// as Azure counts them (a query returning k entities costs k, a batch of
// k operations k), and a queue 2,000 messages; the call past the rate is
// refused as Azure refuses it.
func TestThrottled(t *testing.T) {
	ctx := context.Background()
	throttled := func(err error) bool {
		return errors.Is(err, storage.ErrThrottled) && errors.Is(err, storage.ErrTransient)
	}
	t.Run("partition", func(t *testing.T) {
		b, inner, _ := open(t, time.Nanosecond)
		// 1,000 entities written behind the account's back cost nothing.
		for i := range 10 {
			ops := make([]storage.Op, 100)
			for j := range ops {
				ops[j] = storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", i*100+j)}}
			}
			if _, err := inner.Table("tab").Transact(ctx, "p", ops); err != nil {
				t.Fatal(err)
			}
		}
		page, err := b.Table("tab").Query(ctx, "p", storage.QueryOptions{})
		if err != nil || len(page.Entities) != 1000 {
			t.Fatalf("query: %d entities, %v", len(page.Entities), err)
		}
		// 1,000 entities are left of the second's 2,000: ten batches of
		// 100, then nothing.
		for i := range 10 {
			ops := make([]storage.Op, 100)
			for j := range ops {
				ops[j] = storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", i*100+j)}, ETag: storage.AnyETag}
			}
			if _, err := b.Table("tab").Transact(ctx, "p", ops); err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
		}
		if _, err := b.Table("tab").Get(ctx, "p", "0000"); !throttled(err) {
			t.Fatalf("get past the partition's rate: %v, want ErrThrottled and ErrTransient", err)
		}
		// Another partition has its own rate.
		if _, err := b.Table("tab").Upsert(ctx, storage.Entity{PartitionKey: "other", RowKey: "r"}); err != nil {
			t.Fatalf("another partition: %v", err)
		}
		if s := b.ThrottleStats(); s.Refused != 1 {
			t.Errorf("refused %d calls, want 1", s.Refused)
		}
	})
	t.Run("queue", func(t *testing.T) {
		b, _, _ := open(t, time.Nanosecond)
		for i := range 2000 {
			if _, err := b.Queue("work").Enqueue(ctx, "m", storage.EnqueueOptions{}); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		if _, err := b.Queue("work").Enqueue(ctx, "m", storage.EnqueueOptions{}); !throttled(err) {
			t.Fatalf("message 2001: %v, want ErrThrottled and ErrTransient", err)
		}
	})
	t.Run("waits within MaxWait", func(t *testing.T) {
		b, _, c := open(t, time.Second)
		for range 2000 {
			if _, err := b.Queue("work").Enqueue(ctx, "m", storage.EnqueueOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		c.take()
		// Half a millisecond's worth of the queue's rate, then the latency.
		if _, err := b.Queue("work").Enqueue(ctx, "m", storage.EnqueueOptions{}); err != nil {
			t.Fatalf("message 2001: %v", err)
		}
		if got, n := c.take(); got != 10*time.Millisecond+500*time.Microsecond || n != 2 {
			t.Errorf("message 2001 waited %v in %d sleeps, want 10.5ms in 2", got, n)
		}
	})
}

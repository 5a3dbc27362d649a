package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

func open(t testing.TB) *Backend { return openWith(t, Config{}) }

func openWith(t testing.TB, cfg Config) *Backend {
	t.Helper()
	cfg.Dir = t.TempDir()
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// fakeClock makes queue time a variable the test moves.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) install(b *Backend) {
	b.clock = func() time.Duration { return time.Duration(c.now.Load()) }
}
func (c *fakeClock) advance(d time.Duration) { c.now.Add(int64(d)) }

func TestSortedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s sortedKeys
	ref := map[string]bool{}
	key := func() string { return fmt.Sprintf("k%05d", r.IntN(6000)) }
	for i := range 30000 {
		k := key()
		if r.IntN(3) == 0 {
			if s.remove(k) != ref[k] {
				t.Fatalf("step %d: remove(%s) disagrees with the reference", i, k)
			}
			delete(ref, k)
		} else {
			if s.insert(k) == ref[k] {
				t.Fatalf("step %d: insert(%s) disagrees with the reference", i, k)
			}
			ref[k] = true
		}
		if i%1000 != 0 {
			continue
		}
		want := make([]string, 0, len(ref))
		for k := range ref {
			want = append(want, k)
		}
		sort.Strings(want)
		from := key()
		var got []string
		s.ascend(from, func(k string) bool { got = append(got, k); return true })
		if w := want[sort.SearchStrings(want, from):]; !slices.Equal(got, w) {
			t.Fatalf("step %d: ascend(%s) gave %d keys, want %d", i, from, len(got), len(w))
		}
		for _, c := range s.chunks {
			if len(c) == 0 || len(c) > chunkMax {
				t.Fatalf("step %d: chunk of %d keys", i, len(c))
			}
		}
	}
}

// checkHeap verifies the queue's heap order and its index bookkeeping.
func checkHeap(t *testing.T, q *queue) {
	t.Helper()
	if len(q.heap) != len(q.byID) {
		t.Fatalf("heap holds %d messages, map %d", len(q.heap), len(q.byID))
	}
	for i, m := range q.heap {
		if m.index != i || q.byID[m.id] != m {
			t.Fatalf("message %s at %d has index %d", m.id, i, m.index)
		}
		if i > 0 && q.less(i, (i-1)/2) {
			t.Fatalf("heap order broken at %d", i)
		}
	}
}

func TestQueueRandomOps(t *testing.T) {
	ctx := context.Background()
	b := open(t)
	var clock fakeClock
	clock.install(b)
	h := b.Queue("random")
	if err := h.Create(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := b.queues.Load("random")
	q := v.(*queue)
	r := rand.New(rand.NewPCG(3, 4))
	held := map[string]string{} // id -> receipt of dequeued messages
	live := map[string]bool{}   // ids neither deleted nor expired
	for step := range 5000 {
		switch r.IntN(6) {
		case 0, 1:
			opts := storage.EnqueueOptions{Delay: time.Duration(r.IntN(3)) * time.Second}
			if r.IntN(4) == 0 {
				opts.TTL = time.Duration(3+r.IntN(5)) * time.Second
			}
			rc, err := h.Enqueue(ctx, fmt.Sprint(step), opts)
			if err != nil {
				t.Fatal(err)
			}
			live[rc.ID] = true
		case 2:
			msgs, err := h.Dequeue(ctx, 1+r.IntN(5), time.Duration(1+r.IntN(3))*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				held[m.ID] = m.PopReceipt
			}
		case 3:
			for id, rc := range held {
				err := h.Delete(ctx, id, rc)
				if err == nil {
					delete(live, id)
				}
				delete(held, id)
				break
			}
		case 4:
			for id, rc := range held {
				if nr, err := h.UpdateVisibility(ctx, id, rc, time.Duration(r.IntN(3))*time.Second); err == nil {
					held[id] = nr
				} else {
					delete(held, id)
				}
				break
			}
		case 5:
			clock.advance(time.Duration(r.IntN(1500)) * time.Millisecond)
		}
		q.mu.Lock()
		checkHeap(t, q)
		q.mu.Unlock()
	}
	// Peek yields visible messages in heap order: compare with a sort.
	msgs, err := h.Peek(ctx, storage.MaxDequeue)
	if err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	now := b.now()
	var want []*message
	for _, m := range q.heap {
		if m.visibleAt <= now && m.expires > now {
			want = append(want, m)
		}
	}
	slices.SortFunc(want, func(a, b *message) int {
		if a.visibleAt != b.visibleAt {
			return int(a.visibleAt - b.visibleAt)
		}
		return int(a.seq) - int(b.seq)
	})
	q.mu.Unlock()
	want = want[:min(len(want), storage.MaxDequeue)]
	if len(msgs) != len(want) {
		t.Fatalf("peek: %d messages, want %d", len(msgs), len(want))
	}
	for i := range msgs {
		if msgs[i].ID != want[i].id {
			t.Fatalf("peek[%d] = %s, want %s", i, msgs[i].ID, want[i].id)
		}
	}
}

func TestQueueClock(t *testing.T) {
	ctx := context.Background()
	b := open(t)
	var clock fakeClock
	clock.install(b)
	q := b.Queue("clock")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	q.Enqueue(ctx, "ttl", storage.EnqueueOptions{TTL: 10 * time.Second})
	q.Enqueue(ctx, "delayed", storage.EnqueueOptions{Delay: 5 * time.Second})
	q.Enqueue(ctx, "default", storage.EnqueueOptions{})
	q.Enqueue(ctx, "forever", storage.EnqueueOptions{TTL: -1})

	texts := func(msgs []storage.Message) []string {
		var s []string
		for _, m := range msgs {
			s = append(s, m.Text)
		}
		return s
	}
	peek := func() []string {
		msgs, err := q.Peek(ctx, 32)
		if err != nil {
			t.Fatal(err)
		}
		return texts(msgs)
	}
	length := func() int {
		n, err := q.ApproximateLength(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := peek(); !slices.Equal(got, []string{"ttl", "default", "forever"}) {
		t.Errorf("peek at 0s: %q", got)
	}
	clock.advance(5 * time.Second)
	if got := peek(); !slices.Equal(got, []string{"ttl", "default", "forever", "delayed"}) {
		t.Errorf("peek at 5s: %q", got)
	}
	// Hide "ttl" past its expiry: it must vanish, not come back.
	msgs, _ := q.Dequeue(ctx, 1, 20*time.Second)
	if got := texts(msgs); !slices.Equal(got, []string{"ttl"}) {
		t.Fatalf("dequeue at 5s: %q", got)
	}
	if n := length(); n != 4 {
		t.Errorf("length at 5s: %d", n)
	}
	clock.advance(5 * time.Second)
	if n := length(); n != 3 {
		t.Errorf("length at 10s, after the 10s TTL: %d", n)
	}
	if err := q.Delete(ctx, msgs[0].ID, msgs[0].PopReceipt); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("delete an expired message: %v", err)
	}
	clock.advance(storage.DefaultMessageTTL)
	if got := peek(); !slices.Equal(got, []string{"forever"}) {
		t.Errorf("peek after seven days: %q", got)
	}
	if n := length(); n != 1 {
		t.Errorf("length after seven days: %d", n)
	}
}

// TestBlobAtomic has writers replace blobs with uniform contents of
// varying size while readers check that every read is one whole version.
func TestBlobAtomic(t *testing.T) {
	t.Run("Memory", func(t *testing.T) { testBlobAtomic(t, openWith(t, Config{})) })
	t.Run("Files", func(t *testing.T) { testBlobAtomic(t, openWith(t, Config{MemoryBytes: -1})) })
}

func testBlobAtomic(t *testing.T, b *Backend) {
	ctx := context.Background()
	c := b.Container("atomic")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	version := func(v int) []byte { return bytes.Repeat([]byte{byte(v)}, 1000+v*997) }
	if err := c.Put(ctx, "x", version(0)); err != nil {
		t.Fatal(err)
	}
	check := func(data []byte) error {
		if len(data) == 0 {
			return errors.New("empty read")
		}
		if want := version(int(data[0])); !bytes.Equal(data, want) {
			return fmt.Errorf("read %d bytes starting %d: not one version", len(data), data[0])
		}
		return nil
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Go(func() {
			for v := 1; v < 200; v++ {
				var err error
				if v%2 == 0 {
					err = c.Put(ctx, "x", version((v+w)%250))
				} else {
					err = c.Upload(ctx, "x", bytes.NewReader(version((v+w)%250)))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var reads atomic.Int64
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				data, err := c.Get(ctx, "x")
				if err == nil {
					err = check(data)
				}
				if err == nil {
					var rc io.ReadCloser
					if rc, err = c.Open(ctx, "x", 0, -1); err == nil {
						data, err = io.ReadAll(rc)
						rc.Close()
						if err == nil {
							err = check(data)
						}
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if reads.Load() == 0 {
		t.Error("no reads happened")
	}
	// Every replaced version is gone: only the current one is left.
	v, _ := b.containers.Load("atomic")
	entries, err := os.ReadDir(v.(*container).dir)
	files := int64(len(entries))
	if err != nil || files+b.memUsed.Load() == 0 || files > 0 && b.memUsed.Load() != 0 {
		t.Errorf("container holds %d files and %d bytes in memory (%v), want one version", files, b.memUsed.Load(), err)
	}
}

func TestBlobMemoryBudget(t *testing.T) {
	ctx := context.Background()
	b := openWith(t, Config{MemoryBytes: 3 << 20})
	c := b.Container("budget")
	c.Create(ctx)
	v, _ := b.containers.Load("budget")
	dir := v.(*container).dir
	where := func() (files int, mem int64) {
		entries, _ := os.ReadDir(dir)
		return len(entries), b.memUsed.Load()
	}
	mib := make([]byte, MaxMemoryBlob)
	for i := range 3 {
		if err := c.Put(ctx, fmt.Sprint("m", i), mib); err != nil {
			t.Fatal(err)
		}
	}
	if f, m := where(); f != 0 || m != 3<<20 {
		t.Errorf("3 blobs of 1 MiB in a 3 MiB budget: %d files, %d bytes in memory", f, m)
	}
	c.Put(ctx, "over", []byte("x"))                                      // budget spent: to a file
	c.Upload(ctx, "big", bytes.NewReader(make([]byte, MaxMemoryBlob+1))) // too big for memory
	if f, m := where(); f != 2 || m != 3<<20 {
		t.Errorf("over budget: %d files, %d bytes in memory; want 2 and 3 MiB", f, m)
	}
	c.Delete(ctx, "m0")
	c.Put(ctx, "m1", []byte("small")) // replaces 1 MiB by 5 bytes
	if f, m := where(); f != 2 || m != 1<<20+5 {
		t.Errorf("after delete and replace: %d files, %d bytes in memory", f, m)
	}
	if got, _ := c.Get(ctx, "big"); len(got) != MaxMemoryBlob+1 {
		t.Errorf("big blob read back as %d bytes", len(got))
	}
	// Get hands out a copy: changing it changes nothing stored.
	got, _ := c.Get(ctx, "m1")
	got[0] = 'X'
	if again, _ := c.Get(ctx, "m1"); string(again) != "small" {
		t.Errorf("a change to a returned blob was stored: %q", again)
	}
	c.Drop(ctx)
	if m := b.memUsed.Load(); m != 0 {
		t.Errorf("after drop, %d bytes in memory", m)
	}
}

func TestCloseAndDrop(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Container("files")
	c.Create(ctx)
	c.Put(ctx, "a", []byte("a"))
	c.Put(ctx, "b/c", []byte("bc"))
	if err := c.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(b.root)
	if len(entries) != 0 {
		t.Errorf("dropped container left %d entries", len(entries))
	}
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if l, err := c.List(ctx, ""); err != nil || len(l) != 0 {
		t.Errorf("a container made again after a drop lists %v, %v", l, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("close left %d entries in the directory", len(entries))
	}
	if err := c.Put(ctx, "a", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("put after close: %v", err)
	}
	if _, err := b.Queue("qqq").Enqueue(ctx, "x", storage.EnqueueOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("enqueue after close: %v", err)
	}
	if _, err := Open(Config{Dir: dir + "/absent"}); err == nil {
		t.Error("open with a missing directory succeeded")
	}
}

func TestContextDone(t *testing.T) {
	b := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Queue("qqq").Create(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("create with a cancelled context: %v", err)
	}
}

// Benchmarks of the hot paths, from many goroutines.

func BenchmarkQueueCycle(b *testing.B) {
	ctx := context.Background()
	be := open(b)
	q := be.Queue("bench")
	q.Create(ctx)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := q.Enqueue(ctx, "task", storage.EnqueueOptions{}); err != nil {
				b.Fatal(err)
			}
			msgs, err := q.Dequeue(ctx, 1, time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range msgs {
				q.Delete(ctx, m.ID, m.PopReceipt)
			}
		}
	})
}

func BenchmarkBlobPutGet(b *testing.B) {
	ctx := context.Background()
	be := open(b)
	c := be.Container("bench")
	c.Create(ctx)
	data := make([]byte, 64<<10)
	var n atomic.Int64
	b.SetBytes(int64(2 * len(data)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := fmt.Sprint("b", n.Add(1)%64)
			if err := c.Put(ctx, name, data); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Get(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTableUpsertGet(b *testing.B) {
	ctx := context.Background()
	be := open(b)
	t := be.Table("bench")
	t.Create(ctx)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			pk := fmt.Sprint("p", i%16)
			rk := fmt.Sprint("r", i)
			if _, err := t.Upsert(ctx, storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"N": i, "B": []byte("xyz")}}); err != nil {
				b.Fatal(err)
			}
			if _, err := t.Get(ctx, pk, rk); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTableTransact(b *testing.B) {
	ctx := context.Background()
	be := open(b)
	t := be.Table("bench")
	t.Create(ctx)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		ops := make([]storage.Op, storage.MaxBatchOps)
		for pb.Next() {
			i := n.Add(1)
			pk := fmt.Sprint("p", i%16)
			for j := range ops {
				ops[j] = storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: fmt.Sprint(i, "-", j), Props: map[string]any{"N": int64(j)}}}
			}
			if _, err := t.Transact(ctx, pk, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
}

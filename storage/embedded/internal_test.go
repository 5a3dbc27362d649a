package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// TestQueueRandomOps runs random operations against a model of Azure's
// queue semantics: dequeues take the visible messages in order of
// visibility time, then insertion, skipping expired ones.
func TestQueueRandomOps(t *testing.T) {
	ctx := context.Background()
	b := open(t)
	var clock fakeClock
	clock.install(b)
	h := b.Queue("random")
	if err := h.Create(ctx); err != nil {
		t.Fatal(err)
	}
	type modelMsg struct {
		id                 string
		visibleAt, expires time.Duration
		seq                int
		receipt            string
	}
	model := map[string]*modelMsg{}
	now := func() time.Duration { return time.Duration(clock.now.Load()) }
	// visible lists the model's visible messages in dequeue order,
	// forgetting expired ones as the backend does when it meets them.
	visible := func() []*modelMsg {
		var out []*modelMsg
		for _, m := range model {
			if m.visibleAt <= now() {
				out = append(out, m)
			}
		}
		slices.SortFunc(out, func(a, b *modelMsg) int {
			if a.visibleAt != b.visibleAt {
				return int(a.visibleAt - b.visibleAt)
			}
			return a.seq - b.seq
		})
		return out
	}
	r := rand.New(rand.NewPCG(3, 4))
	for step := range 3000 {
		switch r.IntN(6) {
		case 0, 1:
			opts := storage.EnqueueOptions{Delay: time.Duration(r.IntN(3)) * time.Second}
			expires := now() + storage.DefaultMessageTTL
			if r.IntN(4) == 0 {
				opts.TTL = time.Duration(3+r.IntN(5)) * time.Second
				expires = now() + opts.TTL
			}
			rc, err := h.Enqueue(ctx, fmt.Sprint(step), opts)
			if err != nil {
				t.Fatal(err)
			}
			model[rc.ID] = &modelMsg{id: rc.ID, visibleAt: now() + opts.Delay, expires: expires, seq: step, receipt: rc.PopReceipt}
		case 2:
			n, vis := 1+r.IntN(5), time.Duration(1+r.IntN(3))*time.Second
			msgs, err := h.Dequeue(ctx, n, vis)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range visible() {
				if len(want) == n {
					break
				}
				if m.expires <= now() {
					delete(model, m.id)
					continue
				}
				want = append(want, m.id)
				m.visibleAt = now() + vis
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.ID)
				model[m.ID].receipt = m.PopReceipt
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: dequeued %v, want %v", step, got, want)
			}
		case 3, 4:
			var m *modelMsg
			for _, x := range model {
				m = x
				break
			}
			if m == nil {
				continue
			}
			receipt := m.receipt
			if r.IntN(4) == 0 {
				receipt = "stale"
			}
			var want error
			switch {
			case m.expires <= now():
				want = storage.ErrNotFound
				delete(model, m.id)
			case receipt != m.receipt:
				want = storage.ErrLeaseLost
			}
			var err error
			if r.IntN(2) == 0 {
				err = h.Delete(ctx, m.id, receipt)
				if want == nil {
					delete(model, m.id)
				}
			} else {
				vis := time.Duration(r.IntN(3)) * time.Second
				var nr string
				nr, err = h.UpdateVisibility(ctx, m.id, receipt, vis)
				if want == nil {
					m.receipt, m.visibleAt = nr, now()+vis
				}
			}
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("step %d: got %v, want %v", step, err, want)
			}
		case 5:
			clock.advance(time.Duration(r.IntN(1500)) * time.Millisecond)
		}
	}
	msgs, err := h.Peek(ctx, storage.MaxDequeue)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, m := range visible() {
		if m.expires > now() && len(want) < storage.MaxDequeue {
			want = append(want, m.id)
		}
	}
	for _, m := range msgs {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("peek: %v, want %v", got, want)
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
	t.Run("Inline", func(t *testing.T) { testBlobAtomic(t, openWith(t, Config{})) })
	t.Run("Files", func(t *testing.T) { testBlobAtomic(t, openWith(t, Config{MaxInlineBlob: -1})) })
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
	if files, inFile := blobFiles(t, b, "atomic", "x"); files != inFile {
		t.Errorf("container holds %d files, want %d", files, inFile)
	}
}

// blobFiles counts the files of a container, and whether blob name is in one.
func blobFiles(t *testing.T, b *Backend, cname, name string) (files, inFile int) {
	t.Helper()
	b.reaper.sync() // the files of replaced and deleted versions are gone
	v, _ := b.containers.Load(cname)
	c := v.(*container)
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := b.get(c.blobKey(name)); rec != nil && rec[0] == blobFile {
		inFile = 1
	}
	return len(entries), inFile
}

// TestBlobInline keeps blobs up to MaxInlineBlob in the store and larger
// ones in files, which go when their blob is replaced or deleted.
func TestBlobInline(t *testing.T) {
	ctx := context.Background()
	b := openWith(t, Config{MaxInlineBlob: 1000})
	c := b.Container("inline")
	c.Create(ctx)
	files := func() int { n, _ := blobFiles(t, b, "inline", ""); return n }
	for i, size := range []int{0, 1, 1000} {
		if err := c.Put(ctx, fmt.Sprint("s", i), make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	if n := files(); n != 0 {
		t.Errorf("blobs of up to 1000 bytes: %d files", n)
	}
	c.Put(ctx, "big", make([]byte, 1001))
	c.Upload(ctx, "stream", bytes.NewReader(make([]byte, 5000)))
	if n := files(); n != 2 {
		t.Errorf("two blobs over 1000 bytes: %d files", n)
	}
	c.Put(ctx, "big", []byte("small")) // replaces a file by a record
	c.Delete(ctx, "stream")
	if n := files(); n != 0 {
		t.Errorf("after replace and delete: %d files", n)
	}
	if l, err := c.List(ctx, "s"); err != nil || len(l) != 3 || l[2].Size != 1000 {
		t.Errorf("list: %+v, %v", l, err)
	}
	// Get hands out a copy: changing it changes nothing stored.
	got, _ := c.Get(ctx, "big")
	got[0] = 'X'
	if again, _ := c.Get(ctx, "big"); string(again) != "small" {
		t.Errorf("a change to a returned blob was stored: %q", again)
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
	entries, _ := os.ReadDir(filepath.Join(b.root, blobDir))
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

// Benchmarks of the hot paths, from many goroutines, in memory and with
// every write synced to disk: the store's access pattern, which chose it
// (docs/embedded-storage.md).

// benchModes runs fn on a fresh backend of each mode.
func benchModes(b *testing.B, fn func(b *testing.B, be *Backend)) {
	for _, mode := range []struct {
		name string
		cfg  Config
	}{{"Memory", Config{}}, {"Persistent", Config{Persist: true}}} {
		b.Run(mode.name, func(b *testing.B) { fn(b, openWith(b, mode.cfg)) })
	}
}

// benchTable creates a table for a benchmark.
func benchTable(b *testing.B, be *Backend) storage.Table {
	t := be.Table("bench")
	if err := t.Create(context.Background()); err != nil {
		b.Fatal(err)
	}
	return t
}

func BenchmarkQueueCycle(b *testing.B) {
	benchModes(b, func(b *testing.B, be *Backend) {
		ctx := context.Background()
		q := be.Queue("bench")
		q.Create(ctx)
		b.SetParallelism(4)
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
	})
}

func BenchmarkBlobPutGet(b *testing.B) {
	for _, mode := range []struct {
		name string
		cfg  Config
	}{
		{"Inline", Config{}},
		{"Files", Config{MaxInlineBlob: -1}},
		{"Persistent", Config{Persist: true}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			be := openWith(b, mode.cfg)
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
		})
	}
}

// BenchmarkTableUpdate is ETag-guarded single-row updates, as claims are.
func BenchmarkTableUpdate(b *testing.B) {
	benchModes(b, func(b *testing.B, be *Backend) {
		ctx, t := context.Background(), benchTable(b, be)
		var n atomic.Int64
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			e := storage.Entity{PartitionKey: fmt.Sprint("p", n.Add(1)), RowKey: "r", Props: map[string]any{"N": int64(1), "B": []byte("xyz")}}
			etag, err := t.Add(ctx, e)
			if err != nil {
				b.Fatal(err)
			}
			for pb.Next() {
				if etag, err = t.Update(ctx, e, etag); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkTableTransact is batches of 100 adds, each failing if present.
func BenchmarkTableTransact(b *testing.B) {
	benchModes(b, func(b *testing.B, be *Backend) {
		ctx, t := context.Background(), benchTable(b, be)
		var n atomic.Int64
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			ops := make([]storage.Op, storage.MaxBatchOps)
			for pb.Next() {
				i := n.Add(1)
				pk := fmt.Sprint("p", i%16)
				for j := range ops {
					ops[j] = storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pk, RowKey: fmt.Sprint(i, "-", j), Props: map[string]any{"N": int64(j)}}}
				}
				if _, err := t.Transact(ctx, pk, ops); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N*storage.MaxBatchOps)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkTableQuery reads pages of 1000 rows of one partition in order.
func BenchmarkTableQuery(b *testing.B) {
	benchModes(b, func(b *testing.B, be *Backend) {
		ctx, t := context.Background(), benchTable(b, be)
		const rows = 20000
		ops := make([]storage.Op, storage.MaxBatchOps)
		for i := 0; i < rows; i += len(ops) {
			for j := range ops {
				ops[j] = storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%08d", i+j), Props: map[string]any{"N": int64(j), "S": "some text"}}}
			}
			if _, err := t.Transact(ctx, "p", ops); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		i := 0
		for b.Loop() {
			from := fmt.Sprintf("%08d", i%(rows/MaxQueryPage)*MaxQueryPage)
			page, err := t.Query(ctx, "p", storage.QueryOptions{From: from})
			if err != nil || len(page.Entities) != MaxQueryPage {
				b.Fatalf("%d rows, %v", len(page.Entities), err)
			}
			i++
		}
		b.ReportMetric(float64(b.N*MaxQueryPage)/b.Elapsed().Seconds(), "rows/s")
	})
}

func BenchmarkOpenClose(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		be, err := Open(Config{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		be.Close()
	}
}

// TestClosedBackendLeavesNoUnlinkedFile deletes and replaces blobs in
// files, then closes the backend at once: the reaper's queue is drained
// by Close, so the directory holds the current versions' files only.
func TestClosedBackendLeavesNoUnlinkedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(Config{Dir: dir, Persist: true, MaxInlineBlob: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Container("reap")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := c.Put(ctx, fmt.Sprint("b", i%100), make([]byte, 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		if err := c.Delete(ctx, fmt.Sprint("b", i)); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := b.containers.Load("reap")
	cdir := v.(*container).dir
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(cdir); err != nil || len(entries) != 50 {
		t.Errorf("after 300 writes of 100 blobs, 50 of them deleted, and Close: %d files (%v), want 50", len(entries), err)
	}
}

// writeSpy records what is written to it and in how many calls.
type writeSpy struct {
	calls int
	data  []byte
}

func (w *writeSpy) Write(p []byte) (int, error) {
	w.calls++
	w.data = append(w.data, p...)
	return len(p), nil
}

// TestCtxReaderWritesWhole: an upload's reader hands its stream to the
// file in one write where the reader under it can (a bytes.Reader, or a
// wrapper with a WriteTo of its own, as the storage wrapper's counting
// reader is), and through reads otherwise; a done context stops it
// before the first write, and between the reads of a plain reader.
func TestCtxReaderWritesWhole(t *testing.T) {
	data := bytes.Repeat([]byte("reversi!"), 40_000) // ten of io.Copy's buffers
	type onlyReader struct{ io.Reader }
	tests := []struct {
		name  string
		r     func() io.Reader
		calls int // 0: more than one
	}{
		{"bytes.Reader", func() io.Reader { return bytes.NewReader(data) }, 1},
		{"a WriterTo over it", func() io.Reader { return writerTo{bytes.NewReader(data)} }, 1},
		{"a plain reader", func() io.Reader { return onlyReader{bytes.NewReader(data)} }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writeSpy
			n, err := io.Copy(&w, ctxReader{context.Background(), tt.r()})
			if err != nil || n != int64(len(data)) || !bytes.Equal(w.data, data) {
				t.Fatalf("copied %d bytes (%v), equal to the data: %v", n, err, bytes.Equal(w.data, data))
			}
			if tt.calls == 1 && w.calls != 1 || tt.calls == 0 && w.calls < 2 {
				t.Fatalf("written in %d calls", w.calls)
			}

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			w = writeSpy{}
			if _, err := io.Copy(&w, ctxReader{ctx, tt.r()}); !errors.Is(err, context.Canceled) || w.calls != 0 {
				t.Fatalf("with a done context: %v after %d writes", err, w.calls)
			}
		})
	}

	// Cancelled after the first read of a plain reader: the copy stops.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := cancelAfterRead{onlyReader{bytes.NewReader(data)}, cancel}
	var w writeSpy
	if _, err := io.Copy(&w, ctxReader{ctx, r}); !errors.Is(err, context.Canceled) || len(w.data) >= len(data) {
		t.Fatalf("cancelled after a read: %v after %d of %d bytes", err, len(w.data), len(data))
	}
}

// writerTo hands its bytes.Reader's WriteTo on, as the storage
// wrapper's counting reader does.
type writerTo struct{ r *bytes.Reader }

func (w writerTo) Read(p []byte) (int, error)           { return w.r.Read(p) }
func (w writerTo) WriteTo(dst io.Writer) (int64, error) { return w.r.WriteTo(dst) }

// cancelAfterRead cancels a context once it has been read from.
type cancelAfterRead struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (c cancelAfterRead) Read(p []byte) (int, error) {
	defer c.cancel()
	return c.r.Read(p)
}

package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// recorder is a Middleware that keeps a copy of every call as it was when
// next returned.
type recorder struct{ calls []storage.Call }

func (r *recorder) mw(c *storage.Call, next func() error) error {
	err := next()
	r.calls = append(r.calls, *c)
	return err
}

// TestWrapEveryOperation makes each call of every handle once through Wrap
// and checks what the middleware saw: the operation, the resource, and the
// request and response fields each sets.
func TestWrapEveryOperation(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	w := storage.Wrap(teststore.Embedded(t), rec.mw)
	q, c, tb := w.Queue("work"), w.Container("blobs"), w.Table("rows")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ent := storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"V": "v"}}

	must(q.Create(ctx))
	later, err := q.Enqueue(ctx, "later", storage.EnqueueOptions{Delay: time.Hour})
	must(err)
	r, err := q.Enqueue(ctx, "hello", storage.EnqueueOptions{})
	must(err)
	msgs, err := q.Dequeue(ctx, 1, time.Minute)
	must(err)
	if len(msgs) != 1 {
		t.Fatalf("dequeued %d messages", len(msgs))
	}
	receipt, err := q.UpdateVisibility(ctx, msgs[0].ID, msgs[0].PopReceipt, 0)
	must(err)
	_, err = q.Peek(ctx, 1)
	must(err)
	_, err = q.ApproximateLength(ctx)
	must(err)
	must(q.Delete(ctx, msgs[0].ID, receipt))
	must(q.Drop(ctx))

	must(c.Create(ctx))
	must(c.PutNew(ctx, "a", []byte("abc")))
	must(c.Put(ctx, "a", []byte("abcd")))
	must(c.Upload(ctx, "b", strings.NewReader("12345")))
	_, err = c.Get(ctx, "a")
	must(err)
	rc, err := c.Open(ctx, "b", 1, 2)
	must(err)
	rc.Close()
	_, err = c.List(ctx, "")
	must(err)
	must(c.Delete(ctx, "a"))
	must(c.Drop(ctx))

	must(tb.Create(ctx))
	etag, err := tb.Add(ctx, ent)
	must(err)
	etag, err = tb.Update(ctx, ent, etag)
	must(err)
	_, err = tb.Upsert(ctx, ent)
	must(err)
	_, err = tb.Get(ctx, "p", "r")
	must(err)
	_, err = tb.Query(ctx, "p", storage.QueryOptions{})
	must(err)
	_, err = tb.Transact(ctx, "p", []storage.Op{{Kind: storage.OpUpsert, Entity: ent}, {Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "p", RowKey: "s"}}})
	must(err)
	must(tb.Delete(ctx, "p", "r", storage.AnyETag))
	must(tb.Drop(ctx))

	want := []struct {
		op       storage.Operation
		resource string
		check    func(c storage.Call) bool
	}{
		{storage.QueueCreate, "work", nil},
		{storage.QueueEnqueue, "work", func(c storage.Call) bool { return c.Delay == time.Hour && c.Receipt == later }},
		{storage.QueueEnqueue, "work", func(c storage.Call) bool { return c.Sent == 5 && c.Delay == 0 && c.Receipt == r }},
		{storage.QueueDequeue, "work", func(c storage.Call) bool { return c.Items == 1 && c.Received == 5 && c.Messages[0].ID == r.ID }},
		{storage.QueueUpdateVisibility, "work", func(c storage.Call) bool {
			return c.Receipt == storage.Receipt{ID: r.ID, PopReceipt: receipt}
		}},
		{storage.QueuePeek, "work", func(c storage.Call) bool { return c.Items == 1 && c.Received == 5 && c.Messages[0].Text == "hello" }},
		{storage.QueueApproximateLength, "work", nil},
		{storage.QueueDelete, "work", func(c storage.Call) bool { return c.Receipt == storage.Receipt{ID: r.ID, PopReceipt: receipt} }},
		{storage.QueueDrop, "work", nil},
		{storage.BlobCreate, "blobs", nil},
		{storage.BlobPutNew, "blobs", func(c storage.Call) bool { return c.Sent == 3 }},
		{storage.BlobPut, "blobs", func(c storage.Call) bool { return c.Sent == 4 }},
		{storage.BlobUpload, "blobs", func(c storage.Call) bool { return c.Sent == 5 }},
		{storage.BlobGet, "blobs", func(c storage.Call) bool { return c.Received == 4 }},
		{storage.BlobOpen, "blobs", func(c storage.Call) bool { return c.Body != nil }},
		{storage.BlobList, "blobs", func(c storage.Call) bool { return c.Items == 2 }},
		{storage.BlobDelete, "blobs", nil},
		{storage.BlobDrop, "blobs", nil},
		{storage.TableCreate, "rows", nil},
		{storage.TableAdd, "rows", nil},
		{storage.TableUpdate, "rows", nil},
		{storage.TableUpsert, "rows", nil},
		{storage.TableGet, "rows", nil},
		{storage.TableQuery, "rows", func(c storage.Call) bool { return c.Items == 1 }},
		{storage.TableTransact, "rows", func(c storage.Call) bool { return c.Items == 2 }},
		{storage.TableDelete, "rows", nil},
		{storage.TableDrop, "rows", nil},
	}
	if len(rec.calls) != len(want) {
		t.Fatalf("middleware saw %d calls, want %d", len(rec.calls), len(want))
	}
	for i, w := range want {
		got := rec.calls[i]
		if got.Op != w.op || got.Resource != w.resource || (w.check != nil && !w.check(got)) {
			t.Errorf("call %d: %s on %q %+v, want %s on %q", i, got.Op, got.Resource, got, w.op, w.resource)
		}
	}
}

// TestWrapFaults: a middleware that fails before next leaves the backend
// untouched, one that fails after hides the result, and the context a
// middleware passes on is the one the backend sees.
func TestWrapFaults(t *testing.T) {
	ctx := context.Background()
	inner := teststore.Embedded(t)
	if err := inner.Container("blobs").Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inner.Container("blobs").Put(ctx, "old", []byte("data")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	before := storage.Wrap(inner, func(*storage.Call, func() error) error { return boom })
	if err := before.Container("blobs").Put(ctx, "new", []byte("x")); !errors.Is(err, boom) {
		t.Errorf("put failed before: %v, want boom", err)
	}
	if _, err := inner.Container("blobs").Get(ctx, "new"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a call failed before next reached the backend: %v", err)
	}

	opened := &closeTracker{}
	after := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		if err := next(); err != nil {
			return err
		}
		if c.Body != nil {
			opened.ReadCloser = c.Body
			c.Body = opened
		}
		return boom
	})
	if data, err := after.Container("blobs").Get(ctx, "old"); !errors.Is(err, boom) || data != nil {
		t.Errorf("get failed after: %q, %v; want no data and boom", data, err)
	}
	if rc, err := after.Container("blobs").Open(ctx, "old", 0, -1); !errors.Is(err, boom) || rc != nil {
		t.Errorf("open failed after: %v, %v; want no stream and boom", rc, err)
	}
	if !opened.closed {
		t.Error("the stream of an open that failed after was left open")
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	swap := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		c.Ctx = cancelled
		return next()
	})
	if _, err := swap.Container("blobs").Get(ctx, "old"); !errors.Is(err, context.Canceled) {
		t.Errorf("get with the middleware's cancelled context: %v", err)
	}
}

type closeTracker struct {
	io.ReadCloser
	closed bool
}

func (c *closeTracker) Close() error {
	c.closed = true
	return c.ReadCloser.Close()
}

func TestOperationNames(t *testing.T) {
	seen := map[string]bool{}
	for o := storage.QueueCreate; o <= storage.TableTransact; o++ {
		if o.Name() == "" || o.String() != o.Service()+"."+o.Name() || seen[o.String()] {
			t.Errorf("operation %d: service %q, name %q, string %q", o, o.Service(), o.Name(), o.String())
		}
		seen[o.String()] = true
	}
	if storage.BlobUpload.String() != "blob.upload" || storage.TableTransact.String() != "table.transact" {
		t.Errorf("fault plans name operations as %q and %q", storage.BlobUpload, storage.TableTransact)
	}
}

// BenchmarkWrap is the cost of the interception alone, on a call that does
// little else.
func BenchmarkWrap(b *testing.B) {
	ctx := context.Background()
	be := teststore.Embedded(b)
	c := be.Container("blobs")
	if err := c.Create(ctx); err != nil {
		b.Fatal(err)
	}
	if err := c.Put(ctx, "b", bytes.Repeat([]byte("x"), 64)); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    storage.Backend
	}{
		{"direct", be}, // metered, as every backend the system opens
		{"wrapped", storage.Wrap(be, func(_ *storage.Call, next func() error) error { return next() })},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.b.Container("blobs")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(ctx, "b"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUploadCountsWhatIsSent: an upload's Sent is its length whether the
// backend pulls it with Read or, writing a file, has it written whole
// (the WriteTo of a bytes.Reader), and the blob reads back as sent.
func TestUploadCountsWhatIsSent(t *testing.T) {
	ctx := context.Background()
	be, err := embedded.Open(embedded.Config{Dir: t.TempDir(), SpillToDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	rec := &recorder{}
	c := storage.Wrap(be, rec.mw).Container("blobs")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3*embedded.DefaultMaxInlineBlob+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"bytes", bytes.NewReader(data)},
		{"plain", struct{ io.Reader }{bytes.NewReader(data)}},
		{"small", strings.NewReader("12345")},
	} {
		if err := c.Upload(ctx, tc.name, tc.r); err != nil {
			t.Fatal(err)
		}
		call := rec.calls[len(rec.calls)-1]
		got, err := c.Get(ctx, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(got)); call.Sent != want || tc.name != "small" && !bytes.Equal(got, data) {
			t.Errorf("%s: sent %d bytes, stored %d, equal to the data: %v", tc.name, call.Sent, want, bytes.Equal(got, data))
		}
	}
}

package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

func openPersistent(t *testing.T, dir string) *embedded.Backend {
	t.Helper()
	b, err := embedded.Open(embedded.Config{Dir: dir, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPersistAcrossProcesses finds every kind of state again, with the
// same semantics, in the next Open of the directory, except leases: the
// messages a closed backend held are visible at once, while a delay
// given at Enqueue holds.
func TestPersistAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), embedded.DefaultMaxInlineBlob/16+1) // a file
	props := map[string]any{"S": "text", "N": int64(-7), "B": true, "Y": []byte{0, 1, 2}, "E": []byte{}}

	b := openPersistent(t, dir)
	q, c, tb := b.Queue("work"), b.Container("blobs"), b.Table("state")
	for _, r := range []interface{ Create(context.Context) error }{q, c, tb} {
		if err := r.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []struct {
		text  string
		delay time.Duration
	}{{"visible", 0}, {"delayed", time.Hour}, {"leased", 0}} {
		if _, err := q.Enqueue(ctx, m.text, storage.EnqueueOptions{Delay: m.delay}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := q.Dequeue(ctx, 2, time.Hour) // visible and leased: both hidden for an hour
	if err != nil || len(msgs) != 2 {
		t.Fatalf("dequeue: %d messages, %v", len(msgs), err)
	}
	leased := msgs[1]
	etag, err := tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "r1", Props: props})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Add(ctx, storage.Entity{PartitionKey: "q", RowKey: "r2", Props: map[string]any{"N": int64(2)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "small", []byte("in the store")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	// A second process must not share the directory.
	if _, err := embedded.Open(embedded.Config{Dir: dir, Persist: true}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Open of a directory in use: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = openPersistent(t, dir)
	q, c, tb = b.Queue("work"), b.Container("blobs"), b.Table("state")
	if n, err := q.ApproximateLength(ctx); err != nil || n != 3 {
		t.Errorf("queue length %d (%v), want 3", n, err)
	}
	// Until a new lease is taken, the old receipt still deletes, as on Azure.
	if err := q.Delete(ctx, leased.ID, leased.PopReceipt); err != nil {
		t.Errorf("deleting with the receipt from before Close: %v", err)
	}
	msgs, err = q.Dequeue(ctx, 32, time.Minute)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "visible" || msgs[0].DequeueCount != 2 {
		t.Errorf("dequeued %+v (%v); want only the message leased before, not the delayed one", msgs, err)
	}
	e, err := tb.Get(ctx, "p", "r1")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range props {
		if got := e.Props[k]; !equalProp(got, v) {
			t.Errorf("prop %s = %#v, want %#v", k, got, v)
		}
	}
	if _, err := tb.Update(ctx, storage.Entity{PartitionKey: "p", RowKey: "r1", Props: props}, etag); err != nil {
		t.Errorf("update with the ETag from before Close: %v", err)
	}
	if _, err := tb.Update(ctx, storage.Entity{PartitionKey: "p", RowKey: "r1", Props: props}, etag); !errors.Is(err, storage.ErrPreconditionFailed) {
		t.Errorf("update with an ETag from before Close, replaced since: %v", err)
	}
	page, err := tb.Query(ctx, "q", storage.QueryOptions{})
	if err != nil || len(page.Entities) != 1 {
		t.Errorf("query partition q: %d rows, %v", len(page.Entities), err)
	}
	for name, want := range map[string][]byte{"small": []byte("in the store"), "big": big} {
		got, err := c.Get(ctx, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blob %s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	// New files never overwrite saved ones.
	if err := c.Put(ctx, "later", big[:100]); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "big"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("big blob changed by a later write: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = openPersistent(t, dir)
	defer b.Close()
	if got, err := b.Container("blobs").Get(ctx, "later"); err != nil || !bytes.Equal(got, big[:100]) {
		t.Errorf("blob written in the second process: %v", err)
	}
	if _, err := b.Table("state").Get(ctx, "p", "missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("missing row: %v", err)
	}
}

func equalProp(a, b any) bool {
	if x, ok := a.([]byte); ok {
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}

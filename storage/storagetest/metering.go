package storagetest

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
)

// testMetering runs a fixed sequence of calls through storage.Metered and
// asserts the exact bill. The metering is the same code for every backend;
// what this proves is that the backend answers the sequence alike (the
// same errors, the same messages and blobs handed back, the same bytes
// pulled from an upload), so storage_transactions is comparable across
// backends.
func testMetering(e *env) {
	m := storage.NewMetered(e.b)
	// Safety nets, through the unmetered backend: the sequence drops
	// everything itself when it runs to the end.
	e.queue(e.b, "meter")
	e.container(e.b, "meter")
	e.table(e.b, "meter")

	// Queues, without a category.
	ctx := e.ctx
	q := m.Queue(e.queueName("meter"))
	e.must(q.Create(ctx), "create queue")
	for _, text := range []string{"abc", "defg"} {
		_, err := q.Enqueue(ctx, text, storage.EnqueueOptions{})
		e.must(err, "enqueue")
	}
	_, err := q.Enqueue(ctx, strings.Repeat("x", storage.MaxMessageBytes+1), storage.EnqueueOptions{})
	e.is(err, storage.ErrInvalid, "enqueue over the limit") // refused before sending: not billed
	peeked, err := q.Peek(ctx, 32)
	e.must(err, "peek")
	msgs, err := q.Dequeue(ctx, 32, long)
	e.must(err, "dequeue")
	if len(peeked) != 2 || len(msgs) != 2 {
		e.Fatalf("peeked %d and dequeued %d messages, want 2 and 2", len(peeked), len(msgs))
	}
	none, err := q.Dequeue(ctx, 32, long)
	e.must(err, "dequeue from a queue with nothing visible") // billed all the same
	if len(none) != 0 {
		e.Fatalf("dequeued %d hidden messages", len(none))
	}
	r, err := q.UpdateVisibility(ctx, msgs[0].ID, msgs[0].PopReceipt, long)
	e.must(err, "update visibility")
	e.must(q.Delete(ctx, msgs[0].ID, r), "delete")
	e.must(q.Delete(ctx, msgs[1].ID, msgs[1].PopReceipt), "delete")
	e.is(q.Delete(ctx, msgs[1].ID, msgs[1].PopReceipt), storage.ErrNotFound, "delete again") // a failed request is billed
	_, err = q.ApproximateLength(ctx)
	e.must(err, "approximate length")
	_, err = q.Dequeue(ctx, 0, long)
	e.is(err, storage.ErrInvalid, "dequeue 0")
	e.must(q.Drop(ctx), "drop queue")

	// Blobs, as "results".
	ctx = storage.WithCategory(e.ctx, "results")
	c := m.Container(e.queueName("meter"))
	e.must(c.Create(ctx), "create container")
	e.must(c.PutNew(ctx, "a", make([]byte, 10)), "put new")
	e.is(c.PutNew(ctx, "a", make([]byte, 10)), storage.ErrExists, "put new again")
	e.must(c.Put(ctx, "b", []byte("0123456789abcdefghij")), "put")
	e.must(c.Upload(ctx, "c", &pattern{n: storage.SingleUploadBytes}), "upload one block")
	e.must(c.Upload(ctx, "d", &pattern{n: storage.SingleUploadBytes + 1}), "upload two blocks")
	e.must(c.Upload(ctx, "e", bytes.NewReader(nil)), "upload nothing")
	_, err = c.Get(ctx, "a")
	e.must(err, "get")
	rc, err := c.Open(ctx, "b", 5, 10)
	e.must(err, "open")
	got, err := io.ReadAll(rc)
	e.must(err, "read")
	e.must(rc.Close(), "close")
	if string(got) != "56789abcde" {
		e.Errorf("open b at 5 for 10: %q", got)
	}
	_, err = c.Get(ctx, "zz")
	e.is(err, storage.ErrNotFound, "get missing")
	list, err := c.List(ctx, "")
	e.must(err, "list")
	if len(list) != 5 {
		e.Errorf("listed %d blobs, want 5", len(list))
	}
	e.is(c.Put(ctx, "", nil), storage.ErrInvalid, "put with no name")
	e.must(c.Delete(ctx, "a"), "delete")
	e.must(c.Drop(ctx), "drop container")

	// Tables, as "dedup".
	ctx = storage.WithCategory(e.ctx, "dedup")
	t := m.Table(e.tableName("meter"))
	e.must(t.Create(ctx), "create table")
	_, err = t.Add(ctx, ent("p", "r1", map[string]any{"N": int64(1)}))
	e.must(err, "add")
	_, err = t.Add(ctx, ent("p", "r1", nil))
	e.is(err, storage.ErrExists, "add again")
	_, err = t.Upsert(ctx, ent("p", "r2", nil))
	e.must(err, "upsert")
	r1, err := t.Get(ctx, "p", "r1")
	e.must(err, "get")
	_, err = t.Update(ctx, r1, r1.ETag)
	e.must(err, "update")
	page, err := t.Query(ctx, "p", storage.QueryOptions{Limit: 1})
	e.must(err, "query")
	if page.Next == "" {
		e.Fatalf("query of 2 entities with limit 1 gave no continuation")
	}
	_, err = t.Query(ctx, "p", storage.QueryOptions{Limit: 1, Continuation: page.Next})
	e.must(err, "query second page")
	_, err = t.Transact(ctx, "p", []storage.Op{
		{Kind: storage.OpAdd, Entity: ent("p", "r3", nil)},
		{Kind: storage.OpDelete, Entity: ent("p", "r2", nil), ETag: storage.AnyETag},
	})
	e.must(err, "transact")
	_, err = t.Transact(ctx, "p", []storage.Op{{Kind: storage.OpAdd, Entity: ent("q", "r4", nil)}})
	e.is(err, storage.ErrInvalid, "transact on two partitions")
	e.must(t.Delete(ctx, "p", "r1", storage.AnyETag), "delete")
	e.must(t.Drop(ctx), "drop table")

	want := storage.Stats{
		Ops: []storage.OpStat{
			{Service: "blob", Operation: "create", Category: "results", Count: 1},
			{Service: "blob", Operation: "delete", Category: "results", Count: 1},
			{Service: "blob", Operation: "drop", Category: "results", Count: 1},
			{Service: "blob", Operation: "get", Category: "results", Count: 2},
			{Service: "blob", Operation: "list", Category: "results", Count: 1},
			{Service: "blob", Operation: "open", Category: "results", Count: 1},
			{Service: "blob", Operation: "put", Category: "results", Count: 1},
			{Service: "blob", Operation: "put_block", Category: "results", Count: 2},
			{Service: "blob", Operation: "put_block_list", Category: "results", Count: 1},
			{Service: "blob", Operation: "put_new", Category: "results", Count: 2},
			{Service: "blob", Operation: "upload", Category: "results", Count: 2},
			{Service: "queue", Operation: "approximate_length", Count: 1},
			{Service: "queue", Operation: "create", Count: 1},
			{Service: "queue", Operation: "delete", Count: 3},
			{Service: "queue", Operation: "dequeue", Count: 2},
			{Service: "queue", Operation: "drop", Count: 1},
			{Service: "queue", Operation: "enqueue", Count: 2},
			{Service: "queue", Operation: "peek", Count: 1},
			{Service: "queue", Operation: "update_visibility", Count: 1},
			{Service: "table", Operation: "add", Category: "dedup", Count: 2},
			{Service: "table", Operation: "create", Category: "dedup", Count: 1},
			{Service: "table", Operation: "delete", Category: "dedup", Count: 1},
			{Service: "table", Operation: "drop", Category: "dedup", Count: 1},
			{Service: "table", Operation: "get", Category: "dedup", Count: 1},
			{Service: "table", Operation: "query", Category: "dedup", Count: 2},
			{Service: "table", Operation: "transact", Category: "dedup", Count: 1},
			{Service: "table", Operation: "update", Category: "dedup", Count: 1},
			{Service: "table", Operation: "upsert", Category: "dedup", Count: 1},
		},
		// Message texts, blob payloads and uploads written; messages
		// peeked and dequeued, a blob got and a range read.
		BytesWritten: 3 + 4 + 10 + 20 + storage.SingleUploadBytes + storage.SingleUploadBytes + 1,
		BytesRead:    7 + 7 + 10 + 10,
	}
	s := m.Stats()
	if d := diffStats(s, want); d != "" {
		e.Errorf("metered stats differ from the bill:\n%s", d)
	}
	if s.Total() != 38 {
		e.Errorf("total %d transactions, want 38", s.Total())
	}
	byCat := s.ByCategory()
	if byCat[""] != 12 || byCat["results"] != 15 || byCat["dedup"] != 11 {
		e.Errorf("by category: %v, want 12 uncategorised, 15 results, 11 dedup", byCat)
	}
	if bySvc := s.ByService(); bySvc[storage.ServiceQueue] != 12 || bySvc[storage.ServiceBlob] != 15 || bySvc[storage.ServiceTable] != 11 {
		e.Errorf("by service: %v", bySvc)
	}
}

// diffStats describes how got differs from want, line by line.
func diffStats(got, want storage.Stats) string {
	var b strings.Builder
	n := max(len(got.Ops), len(want.Ops))
	for i := range n {
		var g, w storage.OpStat
		if i < len(got.Ops) {
			g = got.Ops[i]
		}
		if i < len(want.Ops) {
			w = want.Ops[i]
		}
		if g != w {
			fmt.Fprintf(&b, "  ops[%d]: got %+v, want %+v\n", i, g, w)
		}
	}
	if got.BytesWritten != want.BytesWritten {
		fmt.Fprintf(&b, "  bytes written: got %d, want %d\n", got.BytesWritten, want.BytesWritten)
	}
	if got.BytesRead != want.BytesRead {
		fmt.Fprintf(&b, "  bytes read: got %d, want %d\n", got.BytesRead, want.BytesRead)
	}
	return b.String()
}

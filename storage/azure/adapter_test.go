package azure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// countingTransport records the requests a backend sends.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []string // "METHOD comp=..." per request
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	desc := r.Method
	if comp := r.URL.Query().Get("comp"); comp != "" {
		desc += " comp=" + comp
	}
	for k, v := range r.Header { // the SDK sets some headers in lower case
		if strings.EqualFold(k, "x-ms-range") || strings.EqualFold(k, "Range") {
			desc += " " + v[0]
		}
	}
	c.reqs = append(c.reqs, desc)
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *countingTransport) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reqs
	c.reqs = nil
	return r
}

func counted(t *testing.T) (*Backend, *countingTransport) {
	b := openBackend(t, Config{ConnectionString: azuriteConnString(t)})
	ct := &countingTransport{base: b.httpc.Transport}
	b.httpc.Transport = ct
	return b, ct
}

// TestRequestCounts: each call sends exactly the requests storage.Metered
// bills for it.
func TestRequestCounts(t *testing.T) {
	b, ct := counted(t)
	ctx := context.Background()
	c := b.Container(uniqueName("count"))
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background()) })
	ct.take()

	for _, tc := range []struct {
		size int
		want []string
	}{
		{0, []string{"PUT"}},
		{100, []string{"PUT"}},
		{storage.SingleUploadBytes, []string{"PUT"}},
		{storage.SingleUploadBytes + 1, []string{"PUT comp=block", "PUT comp=block", "PUT comp=blocklist"}},
		{2 * storage.UploadBlockBytes, []string{"PUT comp=block", "PUT comp=block", "PUT comp=blocklist"}},
		{2*storage.UploadBlockBytes + 5, []string{"PUT comp=block", "PUT comp=block", "PUT comp=block", "PUT comp=blocklist"}},
	} {
		data := make([]byte, tc.size)
		for i := range data {
			data[i] = byte(i * 31)
		}
		name := fmt.Sprintf("up%d", tc.size)
		// A reader that hands out small pieces, as a network stream would.
		if err := c.Upload(ctx, name, io.LimitReader(&slowReader{data: data}, int64(tc.size))); err != nil {
			t.Fatalf("upload %d: %v", tc.size, err)
		}
		if got := ct.take(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("upload %d: requests %q, want %q", tc.size, got, tc.want)
		}
		got, err := c.Get(ctx, name)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("get %d: %d bytes, %v", tc.size, len(got), err)
		}
		if reqs := ct.take(); len(reqs) != 1 {
			t.Errorf("get: requests %q, want one", reqs)
		}
	}

	rc, err := c.Open(ctx, "up100", 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if len(got) != 20 {
		t.Errorf("open 10+20: %d bytes", len(got))
	}
	if reqs := ct.take(); len(reqs) != 1 || reqs[0] != "GET bytes=10-29" {
		t.Errorf("open: requests %q, want one ranged GET", reqs)
	}

	old := listPageSize
	listPageSize = 2
	defer func() { listPageSize = old }()
	list, err := c.List(ctx, "up")
	if err != nil || len(list) != 6 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if reqs := ct.take(); len(reqs) != 3 {
		t.Errorf("list of 6 in pages of 2: requests %q, want 3", reqs)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Name >= list[i].Name {
			t.Errorf("list out of order: %v", list)
		}
	}
}

type slowReader struct {
	data []byte
	off  int
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1000)], r.data[r.off:])
	r.off += n
	return n, nil
}

// TestUploadStreams: Upload holds at most one block: it has sent the first
// block before it reads past it.
func TestUploadStreams(t *testing.T) {
	b, ct := counted(t)
	ctx := context.Background()
	c := b.Container(uniqueName("stream"))
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background()) })
	ct.take()
	size := 3*storage.UploadBlockBytes + 7
	r := &watchReader{size: size, limit: 2*storage.UploadBlockBytes + 1, sent: func() int {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		return len(ct.reqs)
	}}
	if err := c.Upload(ctx, "s", r); err != nil {
		t.Fatal(err)
	}
	if r.violation != "" {
		t.Error(r.violation)
	}
	if list, err := c.List(ctx, "s"); err != nil || len(list) != 1 || list[0].Size != int64(size) {
		t.Errorf("list: %+v %v", list, err)
	}
}

// watchReader checks that by the time more than limit bytes are read,
// at least one block was sent.
type watchReader struct {
	size, off, limit int
	sent             func() int
	violation        string
}

func (w *watchReader) Read(p []byte) (int, error) {
	if w.off >= w.size {
		return 0, io.EOF
	}
	n := min(len(p), w.size-w.off)
	if w.off+n > w.limit && w.sent() == 0 && w.violation == "" {
		w.violation = fmt.Sprintf("read %d bytes before sending any block", w.off+n)
	}
	for i := range n {
		p[i] = byte(w.off + i)
	}
	w.off += n
	return n, nil
}

func TestMessageText(t *testing.T) {
	b := openBackend(t, Config{ConnectionString: azuriteConnString(t)})
	ctx := context.Background()
	q := b.Queue(uniqueName("text"))
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Drop(context.Background()) })
	text := "<a href=\"x\">&amp;</a> 'q' \r\n\t ü € 😀 \u2028 ]]> end"
	if _, err := q.Enqueue(ctx, text, storage.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Dequeue(ctx, 1, time.Minute)
	if err != nil || len(msgs) != 1 || msgs[0].Text != text {
		t.Fatalf("dequeue: %+v %v", msgs, err)
	}
	r, err := q.UpdateVisibility(ctx, msgs[0].ID, msgs[0].PopReceipt, 0)
	if err != nil {
		t.Fatal(err)
	}
	peek, err := q.Peek(ctx, 1)
	if err != nil || len(peek) != 1 || peek[0].Text != text {
		t.Fatalf("peek after update visibility: %+v %v; the text must be kept", peek, err)
	}
	if err := q.Delete(ctx, msgs[0].ID, r); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"nul \x00", "esc \x1b", "\uFFFE", "bad utf8 \xff"} {
		if _, err := q.Enqueue(ctx, bad, storage.EnqueueOptions{}); !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("enqueue %q: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestOddKeys: keys with characters that URLs, OData literals and JSON
// treat specially work in every table call.
func TestOddKeys(t *testing.T) {
	b, ct := counted(t)
	defer func() {
		if n := len(ct.take()); n != 1+15*6 {
			t.Errorf("%d requests, want %d: retries?", n, 1+15*6)
		}
	}()
	ctx := context.Background()
	tb := b.Table(uniqueName("keys"))
	if err := tb.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Drop(context.Background()) })
	for _, k := range []string{"a b", "it's", "''", "100%", "%20", "a+b", "ü€😀", "x&y=z", "(p)", "a:b;c,d", "*", "@$!", "\"q\"", "<tag>", "~.-_"} {
		props := map[string]any{"K": k}
		etag, err := tb.Add(ctx, storage.Entity{PartitionKey: k, RowKey: k, Props: props})
		if err != nil {
			t.Errorf("add %q: %v", k, err)
			continue
		}
		got, err := tb.Get(ctx, k, k)
		if err != nil || got.PartitionKey != k || got.RowKey != k || got.ETag != etag || got.Props["K"] != k {
			t.Errorf("get %q: %+v %v", k, got, err)
			continue
		}
		page, err := tb.Query(ctx, k, storage.QueryOptions{From: k, To: k + "\u00ff"})
		if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != k {
			t.Errorf("query %q: %+v %v", k, page, err)
		}
		if etag, err = tb.Update(ctx, got, etag); err != nil {
			t.Errorf("update %q: %v", k, err)
		}
		if _, err := tb.Transact(ctx, k, []storage.Op{
			{Kind: storage.OpUpdate, Entity: got, ETag: etag},
			{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: k, RowKey: k + "2"}},
		}); err != nil {
			t.Errorf("transact %q: %v", k, err)
		}
		if err := tb.Delete(ctx, k, k, storage.AnyETag); err != nil {
			t.Errorf("delete %q: %v", k, err)
		}
	}
}

// TestWrongKey: Azurite refuses a request signed with another key; the
// error says so, is none of the sentinels, and does not hold the key.
func TestWrongKey(t *testing.T) {
	cs := azuriteConnString(t)
	r, err := Config{ConnectionString: cs}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(cs, r.keyText, testKey, 1)
	b := openBackend(t, Config{ConnectionString: wrong, Retry: fastRetry})
	ctx := context.Background()
	err1 := b.Container("wrongkey").Create(ctx)
	_, err2 := b.Queue("wrongkey").Peek(ctx, 1)
	_, err3 := b.Table("wrongkey").Get(ctx, "p", "r")
	for i, err := range []error{err1, err2, err3} {
		if err == nil || !strings.Contains(err.Error(), "not authorized") {
			t.Errorf("call %d: %v, want not authorized", i, err)
		}
		if err != nil && (strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), r.keyText)) {
			t.Errorf("call %d: error holds a key: %v", i, err)
		}
		for _, s := range []error{storage.ErrNotFound, storage.ErrInvalid, storage.ErrTransient} {
			if errors.Is(err, s) {
				t.Errorf("call %d: %v is %v", i, err, s)
			}
		}
	}
}

// TestBatchKeys: the keys an SDK batch would send wrong (single quotes in
// a sub-request URL, an empty partition key) reach the service as given:
// an upsert, update and delete in a transaction act on exactly the row
// named, and so do the single-entity calls on an empty partition key.
func TestBatchKeys(t *testing.T) {
	b := openBackend(t, Config{ConnectionString: azuriteConnString(t)})
	ctx := context.Background()
	tb := b.Table(uniqueName("bkeys"))
	if err := tb.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Drop(context.Background()) })
	for _, pk := range []string{"it's", "", "''"} {
		for _, rk := range []string{"r'1", "", "'"} {
			name := fmt.Sprintf("(%q, %q)", pk, rk)
			etags, err := tb.Transact(ctx, pk, []storage.Op{
				{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"V": int64(1)}}},
			})
			if err != nil {
				t.Fatalf("%s: upsert in a transaction: %v", name, err)
			}
			got, err := tb.Get(ctx, pk, rk)
			if err != nil || got.PartitionKey != pk || got.RowKey != rk || got.ETag != etags[0] || got.Props["V"] != int64(1) {
				t.Fatalf("%s: get after upsert: %+v %v; want V 1, ETag %s", name, got, err, etags[0])
			}
			if _, err := tb.Transact(ctx, pk, []storage.Op{
				{Kind: storage.OpUpdate, ETag: etags[0], Entity: storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"V": int64(2)}}},
			}); err != nil {
				t.Fatalf("%s: update in a transaction: %v", name, err)
			}
			etag, err := tb.Update(ctx, storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"V": int64(3)}}, storage.AnyETag)
			if err != nil {
				t.Fatalf("%s: update: %v", name, err)
			}
			page, err := tb.Query(ctx, pk, storage.QueryOptions{})
			if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != rk || page.Entities[0].Props["V"] != int64(3) {
				t.Fatalf("%s: the partition holds %+v (%v); want only the row, V 3", name, page.Entities, err)
			}
			if err := tb.Delete(ctx, pk, rk, etag); err != nil {
				t.Fatalf("%s: delete: %v", name, err)
			}
			if _, err := tb.Upsert(ctx, storage.Entity{PartitionKey: pk, RowKey: rk}); err != nil {
				t.Fatalf("%s: upsert: %v", name, err)
			}
			if _, err := tb.Transact(ctx, pk, []storage.Op{{Kind: storage.OpDelete, ETag: storage.AnyETag, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}}}); err != nil {
				t.Fatalf("%s: delete in a transaction: %v", name, err)
			}
			if _, err := tb.Get(ctx, pk, rk); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("%s: get after delete: %v, want ErrNotFound", name, err)
			}
		}
	}
}

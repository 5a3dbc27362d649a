package azure

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

func TestBackoff(t *testing.T) {
	r := &retrier{cfg: RetryConfig{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}}
	for attempt := 1; attempt <= 10; attempt++ {
		window := min(100*time.Millisecond<<(attempt-1), time.Second)
		var maxSeen time.Duration
		for range 200 {
			d := r.backoff(attempt, 0)
			if d < 0 || d >= window {
				t.Fatalf("attempt %d: backoff %v outside [0, %v)", attempt, d, window)
			}
			maxSeen = max(maxSeen, d)
		}
		if maxSeen < window/2 {
			t.Errorf("attempt %d: 200 draws all below %v: not spread over the window %v", attempt, maxSeen, window)
		}
	}
	if d := r.backoff(1, 700*time.Millisecond); d < 700*time.Millisecond {
		t.Errorf("Retry-After 700ms gave backoff %v", d)
	}
	if d := r.backoff(1, time.Hour); d != time.Second {
		t.Errorf("Retry-After 1h gave backoff %v, want MaxDelay", d)
	}
}

func TestRetrierGivesUp(t *testing.T) {
	var slept []time.Duration
	r := &retrier{cfg: RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		redact: func(s string) string { return s },
		sleep:  func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	tries := 0
	res, err := r.do(context.Background(), "x", func(context.Context) error {
		tries++
		return &statusError{status: 503, code: "ServerBusy"}
	})
	if !errors.Is(err, storage.ErrTransient) || tries != 3 || len(slept) != 2 || res.attempts != 3 {
		t.Errorf("got err %v after %d tries and %d sleeps; want ErrTransient after 3 tries, 2 sleeps", err, tries, len(slept))
	}
	if !strings.Contains(err.Error(), "gave up after 3 tries") {
		t.Errorf("error %q does not say how often it tried", err)
	}

	// Not transient: one try.
	tries = 0
	_, err = r.do(context.Background(), "x", func(context.Context) error {
		tries++
		return &statusError{status: 404, code: "BlobNotFound"}
	})
	if !errors.Is(err, storage.ErrNotFound) || tries != 1 {
		t.Errorf("404: got %v after %d tries", err, tries)
	}

	// A cancelled context stops the retries and says so.
	ctx, cancel := context.WithCancel(context.Background())
	r.sleep = storage.Sleep
	r.cfg.BaseDelay, r.cfg.MaxDelay, r.cfg.MaxAttempts = time.Hour, time.Hour, 5
	tries = 0
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = r.do(ctx, "x", func(context.Context) error {
		tries++
		return &statusError{status: 500}
	})
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Errorf("cancelled: got %v after %d tries", err, tries)
	}
}

func TestClassifyStatus(t *testing.T) {
	for _, tc := range []struct {
		status    int
		code      string
		want      []error
		transient bool
	}{
		{404, "BlobNotFound", []error{storage.ErrNotFound}, false},
		{404, "ResourceNotFound", []error{storage.ErrNotFound}, false},
		{404, "MessageNotFound", []error{storage.ErrNotFound, storage.ErrLeaseLost}, false},
		{400, "PopReceiptMismatch", []error{storage.ErrLeaseLost}, false},
		{409, "EntityAlreadyExists", []error{storage.ErrExists}, false},
		{409, "BlobAlreadyExists", []error{storage.ErrExists}, false},
		{409, "ContainerBeingDeleted", []error{storage.ErrTransient}, true},
		{409, "TableBeingDeleted", []error{storage.ErrTransient}, true},
		{409, "QueueBeingDeleted", []error{storage.ErrTransient}, true},
		{412, "UpdateConditionNotSatisfied", []error{storage.ErrPreconditionFailed}, false},
		{412, "ConditionNotMet", []error{storage.ErrPreconditionFailed}, false},
		{400, "InvalidInput", []error{storage.ErrInvalid}, false},
		{413, "RequestBodyTooLarge", []error{storage.ErrInvalid}, false},
		{408, "", []error{storage.ErrTransient}, true},
		{429, "", []error{storage.ErrTransient, storage.ErrThrottled}, true},
		{500, "InternalError", []error{storage.ErrTransient}, true},
		{500, "OperationTimedOut", []error{storage.ErrTransient, storage.ErrThrottled}, true},
		{502, "", []error{storage.ErrTransient}, true},
		{503, "ServerBusy", []error{storage.ErrTransient, storage.ErrThrottled}, true},
		{504, "", []error{storage.ErrTransient}, true},
		{403, "AuthenticationFailed", nil, false},
	} {
		f := classifyStatus("op", tc.status, tc.code, nil)
		for _, w := range tc.want {
			if !errors.Is(f.err, w) {
				t.Errorf("%d %s: %v is not %v", tc.status, tc.code, f.err, w)
			}
		}
		if tc.want == nil {
			for _, s := range []error{storage.ErrNotFound, storage.ErrExists, storage.ErrInvalid, storage.ErrTransient, storage.ErrThrottled, storage.ErrLeaseLost, storage.ErrPreconditionFailed} {
				if errors.Is(f.err, s) {
					t.Errorf("%d %s: %v is %v", tc.status, tc.code, f.err, s)
				}
			}
		}
		if errors.Is(f.err, storage.ErrThrottled) != slices.Contains(tc.want, storage.ErrThrottled) {
			t.Errorf("%d %s: %v: throttled %v", tc.status, tc.code, f.err, errors.Is(f.err, storage.ErrThrottled))
		}
		if f.transient != tc.transient {
			t.Errorf("%d %s: transient %v, want %v", tc.status, tc.code, f.transient, tc.transient)
		}
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	// A port nobody listens on: every try is refused.
	cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + testKey +
		";BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;QueueEndpoint=http://127.0.0.1:1/devstoreaccount1;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	b := openBackend(t, Config{ConnectionString: cs, Retry: fastRetry})
	ctx := context.Background()
	errs := map[string]error{}
	errs["blob"] = b.Container("ccc").Put(ctx, "x", []byte("x"))
	_, errs["queue"] = b.Queue("qqq").Enqueue(ctx, "x", storage.EnqueueOptions{})
	_, errs["table"] = b.Table("ttt").Get(ctx, "p", "r")
	for svc, err := range errs {
		if !errors.Is(err, storage.ErrTransient) {
			t.Errorf("%s: got %v, want ErrTransient", svc, err)
		}
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: error holds the account key: %v", svc, err)
		}
	}
}

// The tests below put a fault proxy between the backend and Azurite.

func TestRetryTransientThenSuccess(t *testing.T) {
	b, ps := proxied(t, fastRetry)
	ctx := context.Background()
	c := b.Container(uniqueName("retry"))
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background()) })
	if err := c.Put(ctx, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ps[0].setRule(func(r *http.Request, n int) fault {
		if n < 2 {
			return unavailable
		}
		return pass
	})
	if got, err := c.Get(ctx, "a"); err != nil || string(got) != "x" {
		t.Fatalf("get through two 503s: %q, %v", got, err)
	}
	if n := ps[0].requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	// Always failing: MaxAttempts tries, then ErrTransient.
	ps[0].setRule(func(*http.Request, int) fault { return internal })
	_, err := c.Get(ctx, "a")
	if !errors.Is(err, storage.ErrTransient) {
		t.Errorf("get through 500s: %v, want ErrTransient", err)
	}
	if n := ps[0].requests.Load(); n != int64(fastRetry.MaxAttempts) {
		t.Errorf("%d requests, want %d", n, fastRetry.MaxAttempts)
	}

	// Not transient: no retry.
	ps[0].setRule(nil)
	_, err = c.Get(ctx, "missing")
	if !errors.Is(err, storage.ErrNotFound) || ps[0].requests.Load() != 1 {
		t.Errorf("get missing: %v after %d requests, want ErrNotFound after 1", err, ps[0].requests.Load())
	}
}

// TestRetryAfterLostResponse: a write reaches the service but its answer
// is lost; the retry meets the write's own effect and must still succeed.
func TestRetryAfterLostResponse(t *testing.T) {
	b, ps := proxied(t, fastRetry)
	blobP, queueP, tableP := ps[0], ps[1], ps[2]
	ctx := context.Background()

	c := b.Container(uniqueName("lost"))
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Drop(context.Background()) })
	tb := b.Table(uniqueName("lost"))
	if err := tb.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Drop(context.Background()) })
	q := b.Queue(uniqueName("lost"))
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Drop(context.Background()) })

	t.Run("PutNew", func(t *testing.T) {
		blobP.setRule(first(http.MethodPut, "/a", lose))
		if err := c.PutNew(ctx, "a", []byte("mine")); err != nil {
			t.Fatalf("put new with a lost answer: %v (requests %q)", err, blobP.calls())
		}
		// Put (lost), Put (409), Get to compare.
		if calls := blobP.calls(); len(calls) != 3 || !strings.HasPrefix(calls[2], "GET") {
			t.Errorf("requests %q, want PUT, PUT, GET", calls)
		}
		// The same, but the blob was already there with other content:
		// the retry's "exists" is real.
		if err := c.Put(ctx, "b", []byte("theirs")); err != nil {
			t.Fatal(err)
		}
		blobP.setRule(first(http.MethodPut, "/b", lose))
		if err := c.PutNew(ctx, "b", []byte("mine")); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("put new over another's blob with a lost answer: %v, want ErrExists", err)
		}
		// Without a lost answer, identical content is still ErrExists.
		blobP.setRule(nil)
		if err := c.PutNew(ctx, "a", []byte("mine")); !errors.Is(err, storage.ErrExists) {
			t.Fatalf("put new twice: %v, want ErrExists", err)
		}
	})

	t.Run("BlobDelete", func(t *testing.T) {
		if err := c.Put(ctx, "d", []byte("x")); err != nil {
			t.Fatal(err)
		}
		blobP.setRule(first(http.MethodDelete, "/d", lose))
		if err := c.Delete(ctx, "d"); err != nil {
			t.Fatalf("delete with a lost answer: %v", err)
		}
		blobP.setRule(nil)
		if err := c.Delete(ctx, "d"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("delete again: %v, want ErrNotFound", err)
		}
	})

	t.Run("Upload", func(t *testing.T) {
		data := bytes.Repeat([]byte("0123456789abcdef"), (storage.UploadBlockBytes+100)/16)
		blobP.setRule(first(http.MethodPut, "/up", lose)) // the first Put Block
		if err := c.Upload(ctx, "up", bytes.NewReader(data)); err != nil {
			t.Fatalf("upload with a lost block answer: %v", err)
		}
		if got, err := c.Get(ctx, "up"); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get after upload: %d bytes, %v", len(got), err)
		}
	})

	t.Run("Add", func(t *testing.T) {
		e := storage.Entity{PartitionKey: "p", RowKey: "add", Props: map[string]any{"N": int64(1 << 60), "S": "x"}}
		tableP.setRule(first(http.MethodPost, "", lose))
		etag, err := tb.Add(ctx, e)
		if err != nil {
			t.Fatalf("add with a lost answer: %v (requests %q)", err, tableP.calls())
		}
		if calls := tableP.calls(); len(calls) != 3 || !strings.HasPrefix(calls[2], "GET") {
			t.Errorf("requests %q, want POST, POST, GET", calls)
		}
		got, err := tb.Get(ctx, "p", "add")
		if err != nil || got.ETag != etag {
			t.Fatalf("get: %+v %v; want ETag %s", got, err, etag)
		}
		// Another's entity under the same keys: a real conflict.
		if _, err := tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "other", Props: map[string]any{"S": "theirs"}}); err != nil {
			t.Fatal(err)
		}
		tableP.setRule(first(http.MethodPost, "", lose))
		_, err = tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "other", Props: map[string]any{"S": "mine"}})
		if !errors.Is(err, storage.ErrExists) {
			t.Fatalf("add over another's entity with a lost answer: %v, want ErrExists", err)
		}
	})

	t.Run("Update", func(t *testing.T) {
		etag, err := tb.Upsert(ctx, storage.Entity{PartitionKey: "p", RowKey: "upd", Props: map[string]any{"V": int64(1)}})
		if err != nil {
			t.Fatal(err)
		}
		tableP.setRule(first(http.MethodPut, "upd", lose))
		e := storage.Entity{PartitionKey: "p", RowKey: "upd", Props: map[string]any{"V": int64(2)}}
		etag2, err := tb.Update(ctx, e, etag)
		if err != nil {
			t.Fatalf("update with a lost answer: %v (requests %q)", err, tableP.calls())
		}
		if calls := tableP.calls(); len(calls) != 3 {
			t.Errorf("requests %q, want PUT, PUT (412), GET", calls)
		}
		got, err := tb.Get(ctx, "p", "upd")
		if err != nil || got.ETag != etag2 || got.Props["V"] != int64(2) {
			t.Fatalf("get: %+v %v; want V 2, ETag %s", got, err, etag2)
		}
		tableP.setRule(nil)
		if _, err := tb.Update(ctx, e, etag); !errors.Is(err, storage.ErrPreconditionFailed) {
			t.Fatalf("update with the stale ETag: %v, want ErrPreconditionFailed", err)
		}
	})

	t.Run("EntityDelete", func(t *testing.T) {
		etag, err := tb.Upsert(ctx, storage.Entity{PartitionKey: "p", RowKey: "del"})
		if err != nil {
			t.Fatal(err)
		}
		tableP.setRule(first(http.MethodDelete, "del", lose))
		if err := tb.Delete(ctx, "p", "del", etag); err != nil {
			t.Fatalf("delete with a lost answer: %v", err)
		}
	})

	t.Run("Transact", func(t *testing.T) {
		ops := []storage.Op{
			{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "tx", RowKey: "a", Props: map[string]any{"B": []byte{1, 2}}}},
			{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: "tx", RowKey: "b", Props: map[string]any{"T": true}}},
		}
		tableP.setRule(first(http.MethodPost, "$batch", lose))
		etags, err := tb.Transact(ctx, "tx", ops)
		if err != nil {
			t.Fatalf("transact with a lost answer: %v (requests %q)", err, tableP.calls())
		}
		// $batch (lost), $batch (fails: a exists), one Get per row.
		if calls := tableP.calls(); len(calls) != 4 {
			t.Errorf("requests %q, want 2 batches and 2 gets", calls)
		}
		for i, rk := range []string{"a", "b"} {
			got, err := tb.Get(ctx, "tx", rk)
			if err != nil || got.ETag != etags[i] {
				t.Errorf("%s: %+v %v; want ETag %s", rk, got, err, etags[i])
			}
		}
		// The same transaction again really fails: a is there.
		tableP.setRule(nil)
		_, err = tb.Transact(ctx, "tx", ops)
		var te *storage.TxError
		if !errors.As(err, &te) || te.Index != 0 || !errors.Is(err, storage.ErrExists) {
			t.Fatalf("transact again: %v, want TxError at 0 with ErrExists", err)
		}
	})

	t.Run("EnqueueDuplicates", func(t *testing.T) {
		// Documented: a retried Enqueue whose first answer was lost leaves
		// the message twice. Consumers are idempotent.
		queueP.setRule(first(http.MethodPost, "/messages", lose))
		if _, err := q.Enqueue(ctx, "twice", storage.EnqueueOptions{}); err != nil {
			t.Fatalf("enqueue with a lost answer: %v", err)
		}
		if n, err := q.ApproximateLength(ctx); err != nil || n != 2 {
			t.Fatalf("length %d, %v; want 2 (the documented duplicate)", n, err)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		// A request that never arrived is simply sent again.
		tableP.setRule(first(http.MethodPost, "", refuse))
		if _, err := tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "refused"}); err != nil {
			t.Fatalf("add after a dropped connection: %v", err)
		}
	})
}

// TestTryTimeout: a service that never answers fails each try after
// TryTimeout, and the call after MaxAttempts tries.
func TestTryTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + testKey +
		";BlobEndpoint=" + srv.URL + "/devstoreaccount1;QueueEndpoint=" + srv.URL + "/devstoreaccount1;TableEndpoint=" + srv.URL + "/devstoreaccount1;"
	b := openBackend(t, Config{ConnectionString: conn, Retry: RetryConfig{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, TryTimeout: 100 * time.Millisecond}})
	start := time.Now()
	_, err := b.Table("ttt").Get(context.Background(), "p", "r")
	if !errors.Is(err, storage.ErrTransient) {
		t.Errorf("get from a hung service: %v, want ErrTransient", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestThrottlingRetried: on every service, Azure's two answers to load
// (503 Server Busy, 500 Operation Timeout) are retried after a backoff
// that grows, and a call refused on every try fails with ErrThrottled
// (and ErrTransient).
func TestThrottlingRetried(t *testing.T) {
	retry := RetryConfig{MaxAttempts: 5, BaseDelay: 8 * time.Millisecond, MaxDelay: time.Second, TryTimeout: 5 * time.Second}
	b, ps := proxied(t, retry)
	var slept []time.Duration
	b.retry.sleep = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}
	ctx := context.Background()
	c := b.Container(uniqueName("busy"))
	q := b.Queue(uniqueName("busy"))
	tb := b.Table(uniqueName("busy"))
	for _, create := range []func(context.Context) error{c.Create, q.Create, tb.Create} {
		if err := create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Drop(context.Background())
		_ = q.Drop(context.Background())
		_ = tb.Drop(context.Background())
	})
	calls := []struct {
		name  string
		proxy *faultProxy
		call  func() error
	}{
		{"blob put", ps[0], func() error { return c.Put(ctx, "a", []byte("x")) }},
		{"queue enqueue", ps[1], func() error { _, err := q.Enqueue(ctx, "m", storage.EnqueueOptions{}); return err }},
		{"table upsert", ps[2], func() error {
			_, err := tb.Upsert(ctx, storage.Entity{PartitionKey: "p", RowKey: "r"})
			return err
		}},
		{"table transact", ps[2], func() error {
			_, err := tb.Transact(ctx, "p", []storage.Op{{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: "p", RowKey: "t"}}})
			return err
		}},
	}
	for _, f := range []fault{unavailable, timedOut} {
		for _, tc := range calls {
			// Busy twice, then served.
			tc.proxy.setRule(func(_ *http.Request, n int) fault {
				if n < 2 {
					return f
				}
				return pass
			})
			slept = slept[:0]
			if err := tc.call(); err != nil {
				t.Errorf("%s through two refusals (%d): %v", tc.name, f, err)
			}
			if n := tc.proxy.requests.Load(); n != 3 || len(slept) != 2 {
				t.Errorf("%s: %d requests and %d sleeps, want 3 and 2", tc.name, n, len(slept))
			}
			// Busy for good: every try, then ErrThrottled.
			tc.proxy.setRule(func(*http.Request, int) fault { return f })
			slept = slept[:0]
			err := tc.call()
			if !errors.Is(err, storage.ErrThrottled) || !errors.Is(err, storage.ErrTransient) {
				t.Errorf("%s always refused (%d): %v, want ErrThrottled and ErrTransient", tc.name, f, err)
			}
			if n := tc.proxy.requests.Load(); n != int64(retry.MaxAttempts) || len(slept) != retry.MaxAttempts-1 {
				t.Errorf("%s: %d requests and %d sleeps, want %d and %d", tc.name, n, len(slept), retry.MaxAttempts, retry.MaxAttempts-1)
			}
			for i, d := range slept {
				// The window doubles per try: exponential backoff, full jitter.
				window := retry.BaseDelay << i
				if d < 0 || d >= window {
					t.Errorf("%s: sleep %d of %v, outside the backoff window [0, %v)", tc.name, i+1, d, window)
				}
			}
			tc.proxy.setRule(nil)
		}
	}
}

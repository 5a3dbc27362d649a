package storagetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// long is a visibility timeout no test outlives.
const long = 2 * time.Minute

// dequeue takes up to max visible messages: from one Dequeue, or for a
// queue that needs several to see every message (RunQueues), from as
// many as that takes or until it has max.
func (e *env) dequeue(q storage.Queue, max int, vis time.Duration) []storage.Message {
	e.Helper()
	var out []storage.Message
	for range e.polls {
		msgs, err := q.Dequeue(e.ctx, max-len(out), vis)
		e.must(err, "dequeue")
		out = append(out, msgs...)
		if len(out) >= max {
			break
		}
	}
	return out
}

func (e *env) enqueue(q storage.Queue, text string, opts storage.EnqueueOptions) storage.Receipt {
	e.Helper()
	r, err := q.Enqueue(e.ctx, text, opts)
	e.must(err, "enqueue "+abbrev(text))
	return r
}

func (e *env) length(q storage.Queue) int {
	e.Helper()
	n, err := q.ApproximateLength(e.ctx)
	e.must(err, "approximate length")
	return n
}

func abbrev(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%q... (%d bytes)", s[:20], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func testQueueBasic(e *env) {
	q := e.queue(e.b, "basic")
	e.must(q.Create(e.ctx), "create an existing queue")
	before := time.Now()
	r := e.enqueue(q, "hello", storage.EnqueueOptions{})
	if r.ID == "" || r.PopReceipt == "" {
		e.Errorf("enqueue receipt %+v lacks an ID or pop receipt", r)
	}
	msgs := e.dequeue(q, 1, long)
	if len(msgs) != 1 {
		e.Fatalf("dequeue: got %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if m.ID != r.ID || m.Text != "hello" || m.DequeueCount != 1 || m.PopReceipt == "" {
		e.Errorf("dequeued %+v, want ID %s, text hello, dequeue count 1 and a pop receipt", m, r.ID)
	}
	// Emulators and Azure keep whole seconds; allow for that and for clock skew.
	if d := m.InsertedAt.Sub(before); d < -time.Minute || d > time.Minute {
		e.Errorf("inserted at %v, %v from the time of enqueue", m.InsertedAt, d)
	}
	if again := e.dequeue(q, 1, long); len(again) != 0 {
		e.Errorf("dequeue of a hidden message: got %+v", again)
	}
	e.must(q.Delete(e.ctx, m.ID, m.PopReceipt), "delete message")
	e.is(q.Delete(e.ctx, m.ID, m.PopReceipt), storage.ErrNotFound, "delete a deleted message")
	if n := e.length(q); n != 0 {
		e.Errorf("length after delete: %d, want 0", n)
	}
	if got := e.dequeue(q, 32, long); len(got) != 0 {
		e.Errorf("dequeue from an empty queue: got %+v", got)
	}
	e.must(q.Drop(e.ctx), "drop queue")
	e.is(q.Drop(e.ctx), storage.ErrNotFound, "drop a dropped queue")
	_, err := q.Enqueue(e.ctx, "x", storage.EnqueueOptions{})
	e.is(err, storage.ErrNotFound, "enqueue on a dropped queue")
}

func testQueueNotCreated(e *env) {
	q := e.b.Queue(e.queueName("absent"))
	_, err := q.Enqueue(e.ctx, "x", storage.EnqueueOptions{})
	e.is(err, storage.ErrNotFound, "enqueue")
	_, err = q.Dequeue(e.ctx, 1, long)
	e.is(err, storage.ErrNotFound, "dequeue")
	_, err = q.Peek(e.ctx, 1)
	e.is(err, storage.ErrNotFound, "peek")
	_, err = q.ApproximateLength(e.ctx)
	e.is(err, storage.ErrNotFound, "approximate length")
	e.is(q.Drop(e.ctx), storage.ErrNotFound, "drop")
}

func testQueueDelay(e *env) {
	q := e.queue(e.b, "delay")
	start := time.Now()
	e.enqueue(q, "later", storage.EnqueueOptions{Delay: time.Second})
	if got := e.dequeue(q, 32, long); len(got) != 0 {
		e.Fatalf("dequeue during the delay: got %+v", got)
	}
	if n := e.length(q); n != 1 {
		e.Errorf("length counts hidden messages: got %d, want 1", n)
	}
	var got []storage.Message
	e.eventually(10*time.Second, "delayed message visible", func() bool {
		got = e.dequeue(q, 32, long)
		return len(got) > 0
	})
	if len(got) != 1 || got[0].Text != "later" || got[0].DequeueCount != 1 {
		e.Errorf("after the delay: got %+v", got)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		e.Errorf("a message delayed 1s was visible after %v", d)
	}
}

func testQueueVisibilityExpiry(e *env) {
	q := e.queue(e.b, "expiry")
	e.enqueue(q, "again", storage.EnqueueOptions{})
	first := e.dequeue(q, 1, time.Second)
	if len(first) != 1 {
		e.Fatalf("dequeue: got %d messages", len(first))
	}
	if got := e.dequeue(q, 1, time.Second); len(got) != 0 {
		e.Fatalf("dequeue within the visibility window: got %+v", got)
	}
	var second []storage.Message
	e.eventually(10*time.Second, "message redelivered", func() bool {
		second = e.dequeue(q, 1, long)
		return len(second) > 0
	})
	m1, m2 := first[0], second[0]
	if m2.ID != m1.ID || m2.Text != "again" || m2.DequeueCount != 2 || m2.PopReceipt == m1.PopReceipt {
		e.Errorf("redelivered %+v after %+v: want the same ID and text, dequeue count 2, a new pop receipt", m2, m1)
	}
	e.is(q.Delete(e.ctx, m1.ID, m1.PopReceipt), storage.ErrLeaseLost, "delete with the first pop receipt")
	_, err := q.UpdateVisibility(e.ctx, m1.ID, m1.PopReceipt, long)
	e.is(err, storage.ErrLeaseLost, "update with the first pop receipt")
	e.must(q.Delete(e.ctx, m2.ID, m2.PopReceipt), "delete with the current pop receipt")
}

func testQueueUpdateVisibility(e *env) {
	q := e.queue(e.b, "update")
	e.enqueue(q, "keep me", storage.EnqueueOptions{})
	msgs := e.dequeue(q, 1, long)
	if len(msgs) != 1 {
		e.Fatalf("dequeue: got %d messages", len(msgs))
	}
	m := msgs[0]
	r2, err := q.UpdateVisibility(e.ctx, m.ID, m.PopReceipt, long)
	e.must(err, "update visibility")
	if r2 == "" || r2 == m.PopReceipt {
		e.Errorf("update visibility returned pop receipt %q, want a new one (old %q)", r2, m.PopReceipt)
	}
	e.is(q.Delete(e.ctx, m.ID, m.PopReceipt), storage.ErrLeaseLost, "delete with the replaced pop receipt")
	_, err = q.UpdateVisibility(e.ctx, m.ID, m.PopReceipt, long)
	e.is(err, storage.ErrLeaseLost, "update with the replaced pop receipt")
	if got := e.dequeue(q, 1, long); len(got) != 0 {
		e.Fatalf("dequeue of a message still hidden: got %+v", got)
	}
	// Visibility 0 makes it visible at once, text intact.
	r3, err := q.UpdateVisibility(e.ctx, m.ID, r2, 0)
	e.must(err, "update visibility to 0")
	again := e.dequeue(q, 1, long)
	if len(again) != 1 || again[0].ID != m.ID || again[0].Text != "keep me" || again[0].DequeueCount != 2 {
		e.Fatalf("dequeue after making visible: got %+v, want %s with its text and dequeue count 2", again, m.ID)
	}
	e.is(q.Delete(e.ctx, m.ID, r3), storage.ErrLeaseLost, "delete with a receipt from before the last dequeue")
	e.must(q.Delete(e.ctx, m.ID, again[0].PopReceipt), "delete")
	_, err = q.UpdateVisibility(e.ctx, m.ID, again[0].PopReceipt, long)
	e.is(err, storage.ErrNotFound, "update a deleted message")
}

func testQueueEnqueueReceipt(e *env) {
	q := e.queue(e.b, "receipt")
	// A sender can take back a message it enqueued, hidden or not.
	r := e.enqueue(q, "take back", storage.EnqueueOptions{Delay: time.Hour})
	e.must(q.Delete(e.ctx, r.ID, r.PopReceipt), "delete with the enqueue receipt")
	if n := e.length(q); n != 0 {
		e.Errorf("length after taking back: %d", n)
	}
	// ... or bring forward a delayed one.
	r = e.enqueue(q, "bring forward", storage.EnqueueOptions{Delay: time.Hour})
	r2, err := q.UpdateVisibility(e.ctx, r.ID, r.PopReceipt, 0)
	e.must(err, "update visibility with the enqueue receipt")
	msgs := e.dequeue(q, 1, long)
	if len(msgs) != 1 || msgs[0].ID != r.ID || msgs[0].Text != "bring forward" || msgs[0].DequeueCount != 1 {
		e.Fatalf("dequeue: got %+v", msgs)
	}
	e.is(q.Delete(e.ctx, r.ID, r2), storage.ErrLeaseLost, "delete with the sender's receipt after a dequeue")
	e.must(q.Delete(e.ctx, r.ID, msgs[0].PopReceipt), "delete")
}

func testQueueTTL(e *env) {
	q := e.queue(e.b, "ttl")
	start := time.Now()
	e.enqueue(q, "short", storage.EnqueueOptions{TTL: 2 * time.Second})
	e.enqueue(q, "forever", storage.EnqueueOptions{TTL: -1})
	if got := peekTexts(e, q); !slices.Equal(got, []string{"forever", "short"}) {
		e.Fatalf("peek: got %q", got)
	}
	e.eventually(10*time.Second, "message expired", func() bool {
		return len(peekTexts(e, q)) == 1
	})
	if d := time.Since(start); d < time.Second {
		e.Errorf("a message with a 2s TTL expired after %v", d)
	}
	msgs := e.dequeue(q, 32, long)
	if len(msgs) != 1 || msgs[0].Text != "forever" {
		e.Fatalf("dequeue after expiry: got %+v", msgs)
	}
	e.must(q.Delete(e.ctx, msgs[0].ID, msgs[0].PopReceipt), "delete")
}

// peekTexts returns the texts of the visible messages, sorted.
func peekTexts(e *env, q storage.Queue) []string {
	e.Helper()
	msgs, err := q.Peek(e.ctx, storage.MaxDequeue)
	e.must(err, "peek")
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	slices.Sort(texts)
	return texts
}

func testQueueMessageSize(e *env) {
	q := e.queue(e.b, "size")
	max := strings.Repeat("m", storage.MaxMessageBytes)
	e.enqueue(q, max, storage.EnqueueOptions{})
	_, err := q.Enqueue(e.ctx, max+"m", storage.EnqueueOptions{})
	e.is(err, storage.ErrInvalid, "enqueue one byte over the limit")
	// The limit is in bytes of UTF-8, however few characters they make.
	// (No multi-byte text at the limit: Azurite 3.35 garbles multi-byte
	// characters that straddle a read of a large request body and then
	// finds the message too long, Azure/Azurite#2670.)
	_, err = q.Enqueue(e.ctx, strings.Repeat("✓", storage.MaxMessageBytes/3)+"mm", storage.EnqueueOptions{})
	e.is(err, storage.ErrInvalid, "enqueue of three-byte characters one byte over the limit")
	msgs := e.dequeue(q, 32, long)
	if len(msgs) != 1 || msgs[0].Text != max {
		e.Fatalf("dequeue: got %d messages, want the one of %d bytes", len(msgs), len(max))
	}
	e.must(q.Delete(e.ctx, msgs[0].ID, msgs[0].PopReceipt), "delete")
	// Messages travel as XML text: what XML cannot carry is refused.
	for _, bad := range []string{"S0\xff", "nul\x00", "bell\a", "\uFFFE"} {
		_, err := q.Enqueue(e.ctx, bad, storage.EnqueueOptions{})
		e.is(err, storage.ErrInvalid, fmt.Sprintf("enqueue %q", bad))
	}
	e.enqueue(q, "tab\tnewline\ncr\r and \u00e9\U0001F600", storage.EnqueueOptions{})
	if msgs := e.dequeue(q, 32, long); len(msgs) != 1 {
		e.Fatalf("dequeue: got %d messages, want the one with XML-safe characters", len(msgs))
	} else {
		e.must(q.Delete(e.ctx, msgs[0].ID, msgs[0].PopReceipt), "delete")
	}
}

func testQueueDequeueBounds(e *env) {
	q := e.queue(e.b, "bounds")
	for _, n := range []int{0, -1, storage.MaxDequeue + 1} {
		_, err := q.Dequeue(e.ctx, n, long)
		e.is(err, storage.ErrInvalid, fmt.Sprintf("dequeue %d", n))
		_, err = q.Peek(e.ctx, n)
		e.is(err, storage.ErrInvalid, fmt.Sprintf("peek %d", n))
	}
	for _, m := range []struct{ id, receipt string }{
		{"", "r"}, {"i", ""}, {strings.Repeat("i", 257), "r"}, {"i", strings.Repeat("r", 1025)},
	} {
		what := fmt.Sprintf("a message ID of %d bytes and a pop receipt of %d", len(m.id), len(m.receipt))
		e.is(q.Delete(e.ctx, m.id, m.receipt), storage.ErrInvalid, "delete with "+what)
		_, err := q.UpdateVisibility(e.ctx, m.id, m.receipt, time.Second)
		e.is(err, storage.ErrInvalid, "update with "+what)
	}
	const total = 40
	for i := range total {
		e.enqueue(q, fmt.Sprint(i), storage.EnqueueOptions{})
	}
	seen := map[string]bool{}
	for calls := 0; len(seen) < total; calls++ {
		if calls > 2*total {
			e.Fatalf("%d of %d messages dequeued after %d calls", len(seen), total, calls)
		}
		msgs := e.dequeue(q, storage.MaxDequeue, long)
		if len(msgs) > storage.MaxDequeue {
			e.Fatalf("dequeue of %d returned %d", storage.MaxDequeue, len(msgs))
		}
		for _, m := range msgs {
			if seen[m.ID] {
				e.Fatalf("message %s dequeued twice", m.ID)
			}
			seen[m.ID] = true
		}
	}
}

func testQueueApproximateLength(e *env) {
	q := e.queue(e.b, "length")
	if n := e.length(q); n != 0 {
		e.Errorf("length of a new queue: %d", n)
	}
	for i := range 5 {
		e.enqueue(q, fmt.Sprint(i), storage.EnqueueOptions{})
	}
	msgs := e.dequeue(q, 2, long)
	if len(msgs) != 2 {
		e.Fatalf("dequeue 2: got %d", len(msgs))
	}
	if n := e.length(q); n != 5 {
		e.Errorf("length with 2 of 5 hidden: %d, want 5", n)
	}
	for _, m := range msgs {
		e.must(q.Delete(e.ctx, m.ID, m.PopReceipt), "delete")
	}
	if n := e.length(q); n != 3 {
		e.Errorf("length after deleting 2 of 5: %d, want 3", n)
	}
}

func testQueuePeek(e *env) {
	q := e.queue(e.b, "peek")
	if got := peekTexts(e, q); len(got) != 0 {
		e.Errorf("peek at an empty queue: %q", got)
	}
	for _, s := range []string{"a", "b", "c"} {
		e.enqueue(q, s, storage.EnqueueOptions{})
	}
	msgs, err := q.Peek(e.ctx, storage.MaxDequeue)
	e.must(err, "peek")
	if len(msgs) != 3 {
		e.Fatalf("peek: got %d messages, want 3", len(msgs))
	}
	for _, m := range msgs {
		if m.PopReceipt != "" || m.DequeueCount != 0 || m.ID == "" {
			e.Errorf("peeked %+v: want an ID, no pop receipt, dequeue count 0", m)
		}
	}
	one, err := q.Peek(e.ctx, 1)
	e.must(err, "peek 1")
	if len(one) != 1 {
		e.Errorf("peek 1: got %d", len(one))
	}
	// Peeking hides nothing.
	got := e.dequeue(q, 32, long)
	if len(got) != 3 {
		e.Fatalf("dequeue after peek: got %d messages, want 3", len(got))
	}
	if texts := peekTexts(e, q); len(texts) != 0 {
		e.Errorf("peek with every message hidden: %q", texts)
	}
}

func testQueueConcurrentDequeue(e *env) {
	q := e.queue(e.b, "race")
	const total, workers = 64, 8
	for i := range total {
		e.enqueue(q, fmt.Sprint(i), storage.EnqueueOptions{})
	}
	var (
		mu    sync.Mutex
		owner = map[string]int{}
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for {
				msgs, err := q.Dequeue(e.ctx, 4, long)
				if err != nil {
					e.Errorf("worker %d: dequeue: %v", w, err)
					return
				}
				if len(msgs) == 0 {
					return
				}
				mu.Lock()
				for _, m := range msgs {
					if prev, ok := owner[m.ID]; ok {
						e.Errorf("message %s handed to workers %d and %d within its visibility window", m.ID, prev, w)
					}
					owner[m.ID] = w
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// A queue that needs several Dequeues to see every message may have
	// looked empty to every worker; what is left is taken here.
	for {
		msgs := e.dequeue(q, storage.MaxDequeue, long)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if prev, ok := owner[m.ID]; ok {
				e.Errorf("message %s handed to worker %d and again after the workers stopped, within its visibility window", m.ID, prev)
			}
			owner[m.ID] = -1
		}
	}
	if len(owner) != total {
		e.Errorf("workers dequeued %d distinct messages, want %d", len(owner), total)
	}
}

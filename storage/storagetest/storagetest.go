// Package storagetest is the conformance suite for storage.Backend
// implementations: every backend's tests call Run, so that all backends
// are held to the same Azure semantics and the same billing.
//
// The suite is deterministic except for resource names, which carry a
// random prefix so that runs against a shared emulator or account do not
// collide. Tests that must see a timeout expire use timeouts of one or two
// seconds and poll for at most a few seconds beyond.
package storagetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// Run runs the whole suite. open must return a ready backend for the test
// it is given; Run closes it when that test ends, after dropping every
// queue, container and table the test made. Subtests run in parallel, each
// with a backend of its own from open.
func Run(t *testing.T, open func(t *testing.T) storage.Backend) {
	run(t, open, "", 1)
}

// RunQueues runs the queue tests only, for a storage.Queue that is not a
// backend's own (a sharded queue, say): open's backend must hand out that
// kind of queue. A Dequeue of such a queue may return fewer messages than
// are visible (storage.Queue allows it); polls is how many consecutive
// Dequeues find every visible one, and where the suite expects what one
// Dequeue returns of a backend's own queue, it takes up to polls of them.
func RunQueues(t *testing.T, open func(t *testing.T) storage.Backend, polls int) {
	run(t, open, "Queue/", polls)
}

// cases is the suite, by name.
var cases = []struct {
	name string
	fn   func(*env)
}{
	{"Names", testNames},

	{"Queue/Basic", testQueueBasic},
	{"Queue/NotCreated", testQueueNotCreated},
	{"Queue/Delay", testQueueDelay},
	{"Queue/VisibilityExpiry", testQueueVisibilityExpiry},
	{"Queue/UpdateVisibility", testQueueUpdateVisibility},
	{"Queue/EnqueueReceipt", testQueueEnqueueReceipt},
	{"Queue/TTL", testQueueTTL},
	{"Queue/MessageSize", testQueueMessageSize},
	{"Queue/DequeueBounds", testQueueDequeueBounds},
	{"Queue/ApproximateLength", testQueueApproximateLength},
	{"Queue/Peek", testQueuePeek},
	{"Queue/ConcurrentDequeue", testQueueConcurrentDequeue},

	{"Blob/Basic", testBlobBasic},
	{"Blob/NotCreated", testBlobNotCreated},
	{"Blob/Upload", testBlobUpload},
	{"Blob/OpenRange", testBlobOpenRange},
	{"Blob/List", testBlobList},

	{"Table/Basic", testTableBasic},
	{"Table/NotCreated", testTableNotCreated},
	{"Table/PropertyTypes", testTablePropertyTypes},
	{"Table/Limits", testTableLimits},
	{"Table/EntityLimits", testTableEntityLimits},
	{"Table/BatchBytes", testTableBatchBytes},
	{"Table/Copies", testTableCopies},
	{"Table/Query", testTableQuery},
	{"Table/QueryPaging", testTableQueryPaging},
	{"Table/Transact", testTableTransact},
	{"Table/TransactRollback", testTableTransactRollback},
	{"Table/TransactInvalid", testTableTransactInvalid},
	{"Table/ETagRace", testTableETagRace},

	{"Metering", testMetering},
}

// run runs the cases whose names start with prefix.
func run(t *testing.T, open func(t *testing.T) storage.Backend, prefix string, polls int) {
	s := &suite{open: open, polls: polls}
	for _, tc := range cases {
		if !strings.HasPrefix(tc.name, prefix) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(s.env(t))
		})
	}
}

type suite struct {
	open  func(t *testing.T) storage.Backend
	polls int // see RunQueues
}

// env is one subtest's backend and naming scope.
type env struct {
	*testing.T
	b      storage.Backend
	ctx    context.Context
	prefix string // lowercase letter, then lowercase letters and digits
	polls  int    // Dequeues that find every visible message (RunQueues)
}

func (s *suite) env(t *testing.T) *env {
	b := s.open(t)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	return &env{T: t, b: b, ctx: t.Context(), prefix: randomPrefix(), polls: s.polls}
}

// randomPrefix returns "st" and eight random lowercase letters and digits:
// valid at the start of queue, container and table names alike.
func randomPrefix() string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("st")
	for range 8 {
		b = append(b, chars[rand.IntN(len(chars))])
	}
	return string(b)
}

// cleanupCtx outlives the test's own context, which is cancelled before
// cleanups run.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 60*time.Second)
}

// queueName is a queue or container name in this test's scope.
func (e *env) queueName(suffix string) string { return e.prefix + "-" + suffix }

// tableName is a table name in this test's scope; suffix must be alphanumeric.
func (e *env) tableName(suffix string) string { return e.prefix + suffix }

// queue creates a queue on b, to be dropped when the test ends.
func (e *env) queue(b storage.Backend, suffix string) storage.Queue {
	e.Helper()
	q := b.Queue(e.queueName(suffix))
	e.must(q.Create(e.ctx), "create queue")
	e.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := q.Drop(ctx); err != nil && !errors.Is(err, storage.ErrNotFound) {
			e.Errorf("drop queue %s: %v", q.Name(), err)
		}
	})
	return q
}

// container creates a container on b, to be dropped when the test ends.
func (e *env) container(b storage.Backend, suffix string) storage.Container {
	e.Helper()
	c := b.Container(e.queueName(suffix))
	e.must(c.Create(e.ctx), "create container")
	e.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := c.Drop(ctx); err != nil && !errors.Is(err, storage.ErrNotFound) {
			e.Errorf("drop container %s: %v", c.Name(), err)
		}
	})
	return c
}

// table creates a table on b, to be dropped when the test ends.
func (e *env) table(b storage.Backend, suffix string) storage.Table {
	e.Helper()
	t := b.Table(e.tableName(suffix))
	e.must(t.Create(e.ctx), "create table")
	e.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := t.Drop(ctx); err != nil && !errors.Is(err, storage.ErrNotFound) {
			e.Errorf("drop table %s: %v", t.Name(), err)
		}
	})
	return t
}

// must stops the test if err is not nil.
func (e *env) must(err error, what string) {
	e.Helper()
	if err != nil {
		e.Fatalf("%s: %v", what, err)
	}
}

// is checks that err wraps want.
func (e *env) is(err, want error, what string) {
	e.Helper()
	if !errors.Is(err, want) {
		e.Errorf("%s: got error %v, want %v", what, err, want)
	}
}

// eventually polls cond every 100ms until it holds or timeout passes.
func (e *env) eventually(timeout time.Duration, what string, cond func() bool) {
	e.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.Fatalf("%s: not after %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testNames(e *env) {
	for _, name := range []string{"ab", "Upper", "a--b", "-ab", "ab-", "a_b", "a.b", string(make([]byte, 64))} {
		e.is(e.b.Queue(name).Create(e.ctx), storage.ErrInvalid, "create queue "+name)
		e.is(e.b.Container(name).Create(e.ctx), storage.ErrInvalid, "create container "+name)
	}
	for _, name := range []string{"ab", "1abc", "a-bc", "a_bc", "tables", "Tables"} {
		e.is(e.b.Table(name).Create(e.ctx), storage.ErrInvalid, "create table "+name)
	}
	c := e.container(e.b, "names")
	for _, name := range []string{"", "a/", "a.", "a\x01b"} {
		e.is(c.Put(e.ctx, name, []byte("x")), storage.ErrInvalid, "put blob "+name)
	}
}

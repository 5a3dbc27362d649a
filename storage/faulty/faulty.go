// Package faulty wraps a storage.Backend to inject failures at a chosen
// storage call, for tests that must show a run survives a failure at every
// point. One Backend stands for one worker process: it numbers that
// worker's calls 1, 2, 3, ... and at call k either returns a transient
// error once or "crashes": the call, and every later call through the
// wrapper, fails as if the process had died. Either fault can strike
// before the call reaches storage or after storage performed it, the
// caller never learning the outcome (the hard case: a write that happened
// although its writer saw an error).
//
// The wrapper also keeps what a test needs to stand in for the passage of
// time without waiting for it: the queue messages the worker holds (so a
// test can make a dead worker's messages reappear as their visibility
// timeout would) and the delayed messages it enqueued (so a test can let
// compensation messages surface once no writer is alive).
package faulty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// ErrCrashed is returned by every call from the crash on. It is not
// transient: the process it stands for is gone.
var ErrCrashed = errors.New("faulty: the worker has crashed")

// Mode is what happens at the planned call.
type Mode int

// Fault modes.
const (
	// None injects nothing; the wrapper only counts and tracks.
	None Mode = iota
	// FailBefore returns a transient error instead of performing call k.
	FailBefore
	// FailAfter performs call k, then returns a transient error.
	FailAfter
	// CrashBefore fails call k and every later call without performing them.
	CrashBefore
	// CrashAfter performs call k, then fails it and every later call.
	CrashAfter
)

var modeNames = [...]string{None: "none", FailBefore: "fail-before", FailAfter: "fail-after", CrashBefore: "crash-before", CrashAfter: "crash-after"}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// Config plans one fault.
type Config struct {
	Mode Mode
	// At is the number of the call to strike, counting from 1. Zero
	// injects nothing.
	At int64
	// ReleaseAbandoned makes the messages a worker still holds visible
	// again when it dequeues: a worker that asks for new work has given
	// up on the messages it did not delete, so this only brings forward
	// their reappearance after the visibility timeout.
	ReleaseAbandoned bool
	// Before, if set, runs before each call is performed, with its number
	// and name, outside the wrapper's lock: a test can stop a worker at a
	// chosen point and do something else in the meantime.
	Before func(call int64, op string)
}

// Backend is the fault-injecting wrapper. It is safe for concurrent use,
// but call numbers are only reproducible when one goroutine makes the calls.
type Backend struct {
	inner storage.Backend
	cfg   Config

	mu      sync.Mutex
	calls   int64
	ops     []string // the name of every call, in order
	fired   string   // the call the fault struck, as "k op"
	crashed bool
	dead    chan struct{} // closed at the crash
	held    map[msgKey]string
	delayed []delayedMsg
}

type msgKey struct{ queue, id string }

type delayedMsg struct {
	queue   string
	receipt storage.Receipt
}

var _ storage.Backend = (*Backend)(nil)

// New wraps inner.
func New(inner storage.Backend, cfg Config) *Backend {
	return &Backend{inner: inner, cfg: cfg, dead: make(chan struct{}), held: map[msgKey]string{}}
}

// Calls is the number of calls made so far.
func (b *Backend) Calls() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// Ops lists the calls made so far, such as "table.transact", in order.
func (b *Backend) Ops() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ops...)
}

// Fired describes the call the fault struck ("" if it has not).
func (b *Backend) Fired() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fired
}

// Crashed is closed when the planned crash happens.
func (b *Backend) Crashed() <-chan struct{} { return b.dead }

// IsCrashed reports whether the crash has happened.
func (b *Backend) IsCrashed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.crashed
}

// ReleaseHeld makes every message the worker holds visible at once, as
// its visibility timeout would after a crash. Messages that are gone or
// were taken over meanwhile are skipped.
func (b *Backend) ReleaseHeld(ctx context.Context) error {
	b.mu.Lock()
	held := b.held
	b.held = map[msgKey]string{}
	b.mu.Unlock()
	return b.release(ctx, held)
}

func (b *Backend) release(ctx context.Context, held map[msgKey]string) error {
	for k, receipt := range held {
		if _, err := b.inner.Queue(k.queue).UpdateVisibility(ctx, k.id, receipt, 0); err != nil &&
			!errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrLeaseLost) {
			return fmt.Errorf("releasing message %s of %s: %w", k.id, k.queue, err)
		}
	}
	return nil
}

// SurfaceDelayed makes every delayed message the worker enqueued visible
// at once, as the end of its delay would. Call it only when no worker
// that might still commit is alive: surfacing a compensation message
// early breaks the margin its writer relies on. Messages already deleted
// or dequeued are skipped.
func (b *Backend) SurfaceDelayed(ctx context.Context) error {
	b.mu.Lock()
	delayed := b.delayed
	b.delayed = nil
	b.mu.Unlock()
	for _, d := range delayed {
		if _, err := b.inner.Queue(d.queue).UpdateVisibility(ctx, d.receipt.ID, d.receipt.PopReceipt, 0); err != nil &&
			!errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrLeaseLost) {
			return fmt.Errorf("surfacing message %s of %s: %w", d.receipt.ID, d.queue, err)
		}
	}
	return nil
}

// Close closes the wrapped backend.
func (b *Backend) Close() error { return b.inner.Close() }

// Queue returns a wrapped handle.
func (b *Backend) Queue(name string) storage.Queue { return queue{b.inner.Queue(name), b} }

// Container returns a wrapped handle.
func (b *Backend) Container(name string) storage.Container {
	return container{b.inner.Container(name), b}
}

// Table returns a wrapped handle.
func (b *Backend) Table(name string) storage.Table { return table{b.inner.Table(name), b} }

// fault is what one call must do.
type fault int

const (
	proceed fault = iota
	failBefore
	failAfter
	crashBefore
	crashAfter
)

// begin numbers a call and decides its fate.
func (b *Backend) begin(op string) (fault, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.crashed {
		return crashBefore, b.calls
	}
	b.calls++
	b.ops = append(b.ops, op)
	if b.cfg.Mode == None || b.cfg.At == 0 || b.calls != b.cfg.At {
		return proceed, b.calls
	}
	b.fired = fmt.Sprintf("%d %s", b.calls, op)
	switch b.cfg.Mode {
	case FailBefore:
		return failBefore, b.calls
	case FailAfter:
		return failAfter, b.calls
	case CrashBefore, CrashAfter:
		b.crashed = true
		close(b.dead)
		if b.cfg.Mode == CrashBefore {
			return crashBefore, b.calls
		}
		return crashAfter, b.calls
	}
	return proceed, b.calls
}

func (b *Backend) errFor(f fault, op string) error {
	switch f {
	case failBefore, failAfter:
		return fmt.Errorf("faulty: injected failure of %s: %w", op, storage.ErrTransient)
	case crashBefore, crashAfter:
		return fmt.Errorf("%s: %w", op, ErrCrashed)
	}
	return nil
}

// call runs one storage call under the plan: do performs it.
func (b *Backend) call(op string, do func() error) error {
	f, n := b.begin(op)
	if f == failBefore || f == crashBefore {
		return b.errFor(f, op)
	}
	if b.cfg.Before != nil {
		b.cfg.Before(n, op)
	}
	err := do()
	if f == proceed {
		return err
	}
	return b.errFor(f, op)
}

// value runs one storage call that returns a value; on failure the value
// is the zero one, as a caller that saw an error must not use it.
func value[T any](b *Backend, op string, do func() (T, error)) (T, error) {
	var v T
	err := b.call(op, func() error {
		var err error
		v, err = do()
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

func (b *Backend) hold(queue string, msgs []storage.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		b.held[msgKey{queue, m.ID}] = m.PopReceipt
	}
}

func (b *Backend) rehold(queue, id, receipt string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.held[msgKey{queue, id}]; ok {
		b.held[msgKey{queue, id}] = receipt
	}
}

func (b *Backend) drop(queue, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.held, msgKey{queue, id})
}

func (b *Backend) takeAbandoned() map[msgKey]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cfg.ReleaseAbandoned || b.crashed || len(b.held) == 0 {
		return nil
	}
	held := b.held
	b.held = map[msgKey]string{}
	return held
}

type queue struct {
	storage.Queue
	b *Backend
}

func (q queue) Create(ctx context.Context) error {
	return q.b.call("queue.create", func() error { return q.Queue.Create(ctx) })
}

func (q queue) Drop(ctx context.Context) error {
	return q.b.call("queue.drop", func() error { return q.Queue.Drop(ctx) })
}

func (q queue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	return value(q.b, "queue.enqueue", func() (storage.Receipt, error) {
		rc, err := q.Queue.Enqueue(ctx, text, opts)
		if err == nil && opts.Delay > 0 {
			q.b.mu.Lock()
			q.b.delayed = append(q.b.delayed, delayedMsg{q.Name(), rc})
			q.b.mu.Unlock()
		}
		return rc, err
	})
}

func (q queue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	if abandoned := q.b.takeAbandoned(); abandoned != nil {
		if err := q.b.release(ctx, abandoned); err != nil {
			return nil, err
		}
	}
	return value(q.b, "queue.dequeue", func() ([]storage.Message, error) {
		msgs, err := q.Queue.Dequeue(ctx, max, visibility)
		q.b.hold(q.Name(), msgs)
		return msgs, err
	})
}

func (q queue) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	return value(q.b, "queue.update_visibility", func() (string, error) {
		rc, err := q.Queue.UpdateVisibility(ctx, id, popReceipt, visibility)
		if err == nil {
			q.b.rehold(q.Name(), id, rc)
		}
		return rc, err
	})
}

func (q queue) Delete(ctx context.Context, id, popReceipt string) error {
	return q.b.call("queue.delete", func() error {
		err := q.Queue.Delete(ctx, id, popReceipt)
		if err == nil || errors.Is(err, storage.ErrNotFound) {
			q.b.drop(q.Name(), id)
		}
		return err
	})
}

func (q queue) ApproximateLength(ctx context.Context) (int, error) {
	return value(q.b, "queue.approximate_length", func() (int, error) { return q.Queue.ApproximateLength(ctx) })
}

func (q queue) Peek(ctx context.Context, max int) ([]storage.Message, error) {
	return value(q.b, "queue.peek", func() ([]storage.Message, error) { return q.Queue.Peek(ctx, max) })
}

type container struct {
	storage.Container
	b *Backend
}

func (c container) Create(ctx context.Context) error {
	return c.b.call("blob.create", func() error { return c.Container.Create(ctx) })
}

func (c container) Drop(ctx context.Context) error {
	return c.b.call("blob.drop", func() error { return c.Container.Drop(ctx) })
}

func (c container) PutNew(ctx context.Context, name string, data []byte) error {
	return c.b.call("blob.put_new", func() error { return c.Container.PutNew(ctx, name, data) })
}

func (c container) Put(ctx context.Context, name string, data []byte) error {
	return c.b.call("blob.put", func() error { return c.Container.Put(ctx, name, data) })
}

func (c container) Upload(ctx context.Context, name string, r io.Reader) error {
	return c.b.call("blob.upload", func() error { return c.Container.Upload(ctx, name, r) })
}

func (c container) Get(ctx context.Context, name string) ([]byte, error) {
	return value(c.b, "blob.get", func() ([]byte, error) { return c.Container.Get(ctx, name) })
}

func (c container) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	var rc io.ReadCloser
	err := c.b.call("blob.open", func() error {
		var err error
		rc, err = c.Container.Open(ctx, name, offset, length)
		return err
	})
	if err != nil {
		if rc != nil {
			rc.Close()
		}
		return nil, err
	}
	return stream{rc, c.b}, nil
}

func (c container) Delete(ctx context.Context, name string) error {
	return c.b.call("blob.delete", func() error { return c.Container.Delete(ctx, name) })
}

func (c container) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	return value(c.b, "blob.list", func() ([]storage.BlobInfo, error) { return c.Container.List(ctx, prefix) })
}

// stream is an opened blob: reading it is part of the Open call, but a
// crashed process reads nothing more.
type stream struct {
	io.ReadCloser
	b *Backend
}

func (s stream) Read(p []byte) (int, error) {
	if s.b.IsCrashed() {
		return 0, fmt.Errorf("blob.read: %w", ErrCrashed)
	}
	return s.ReadCloser.Read(p)
}

type table struct {
	storage.Table
	b *Backend
}

func (t table) Create(ctx context.Context) error {
	return t.b.call("table.create", func() error { return t.Table.Create(ctx) })
}

func (t table) Drop(ctx context.Context) error {
	return t.b.call("table.drop", func() error { return t.Table.Drop(ctx) })
}

func (t table) Add(ctx context.Context, e storage.Entity) (string, error) {
	return value(t.b, "table.add", func() (string, error) { return t.Table.Add(ctx, e) })
}

func (t table) Upsert(ctx context.Context, e storage.Entity) (string, error) {
	return value(t.b, "table.upsert", func() (string, error) { return t.Table.Upsert(ctx, e) })
}

func (t table) Update(ctx context.Context, e storage.Entity, etag string) (string, error) {
	return value(t.b, "table.update", func() (string, error) { return t.Table.Update(ctx, e, etag) })
}

func (t table) Delete(ctx context.Context, pk, rk, etag string) error {
	return t.b.call("table.delete", func() error { return t.Table.Delete(ctx, pk, rk, etag) })
}

func (t table) Get(ctx context.Context, pk, rk string) (storage.Entity, error) {
	return value(t.b, "table.get", func() (storage.Entity, error) { return t.Table.Get(ctx, pk, rk) })
}

func (t table) Query(ctx context.Context, pk string, opts storage.QueryOptions) (storage.Page, error) {
	return value(t.b, "table.query", func() (storage.Page, error) { return t.Table.Query(ctx, pk, opts) })
}

func (t table) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	return value(t.b, "table.transact", func() ([]string, error) { return t.Table.Transact(ctx, pk, ops) })
}

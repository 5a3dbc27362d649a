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
//
// A Throttle (throttle.go) is the other fault a real account brings:
// Azure's per-account, per-queue and per-partition rate limits, scaled
// down, on a clock a test can fake.
package faulty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

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
	// and name (its storage.Operation's String, such as "blob.upload"),
	// outside the wrapper's lock: a test can stop a worker at a
	// chosen point and do something else in the meantime.
	Before func(call int64, op string)
}

// Backend is the fault-injecting wrapper. It is safe for concurrent use,
// but call numbers are only reproducible when one goroutine makes the calls.
type Backend struct {
	inner   storage.Backend
	wrapped storage.Backend // inner through intercept
	cfg     Config

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
	b := &Backend{inner: inner, cfg: cfg, dead: make(chan struct{}), held: map[msgKey]string{}}
	b.wrapped = storage.Wrap(inner, b.intercept)
	return b
}

// Calls is the number of calls made so far.
func (b *Backend) Calls() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// Ops lists the calls made so far, such as "table.transact" (the String
// of their storage.Operation), in order.
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
func (b *Backend) Queue(name string) storage.Queue { return b.wrapped.Queue(name) }

// Container returns a wrapped handle.
func (b *Backend) Container(name string) storage.Container { return b.wrapped.Container(name) }

// Table returns a wrapped handle.
func (b *Backend) Table(name string) storage.Table { return b.wrapped.Table(name) }

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

// intercept is the storage.Middleware that runs each call under the plan
// and keeps track of the messages the worker holds and delays.
func (b *Backend) intercept(c *storage.Call, next func() error) error {
	if c.Op == storage.QueueDequeue {
		if abandoned := b.takeAbandoned(); abandoned != nil {
			if err := b.release(c.Ctx, abandoned); err != nil {
				return err
			}
		}
	}
	op := c.Op.String()
	f, n := b.begin(op)
	if f == failBefore || f == crashBefore {
		return b.errFor(f, op)
	}
	if b.cfg.Before != nil {
		b.cfg.Before(n, op)
	}
	err := next()
	b.track(c, err)
	if f == proceed {
		return err
	}
	return b.errFor(f, op)
}

// track records what a performed call did to the worker's messages; an
// opened blob stops reading at the crash.
func (b *Backend) track(c *storage.Call, err error) {
	switch c.Op {
	case storage.QueueEnqueue:
		if err == nil && c.Delay > 0 {
			b.mu.Lock()
			b.delayed = append(b.delayed, delayedMsg{c.Resource, c.Receipt})
			b.mu.Unlock()
		}
	case storage.QueueDequeue:
		b.hold(c.Resource, c.Messages)
	case storage.QueueUpdateVisibility:
		if err == nil {
			b.rehold(c.Resource, c.Receipt.ID, c.Receipt.PopReceipt)
		}
	case storage.QueueDelete:
		if err == nil || errors.Is(err, storage.ErrNotFound) {
			b.drop(c.Resource, c.Receipt.ID)
		}
	case storage.BlobOpen:
		if err == nil {
			c.Body = stream{c.Body, b}
		}
	}
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

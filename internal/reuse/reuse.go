// Package reuse keeps the large working buffers of finished tasks for
// the next ones.
//
// An expansion task's edges or a resolve task's positions run to hundreds
// of megabytes at 8x8 ply 14. Allocated afresh for every task, their pages
// were cleared and faulted in each time and their garbage made the
// collector run and stop goroutines over and over: on VMs where page
// faults and signals are dear, more CPU than the work itself. sync.Pool
// does not fit: it keeps an object only until the second collection
// after it was put back, and one put on one processor is out of reach of
// a Get on another until then, so with a collection every few tasks most
// tasks missed it and allocated anew.
package reuse

import (
	"sync"
	"time"
)

// List keeps buffers put back, for the next Get. It holds at most as
// many as were in use at once, and drops them all once none was taken or
// put back for Idle, so that a stage's buffers do not hold memory through
// the stages after it.
type List[T any] struct {
	Idle time.Duration // how long unused buffers are kept

	mu    sync.Mutex
	free  []*T
	last  time.Time // of the last Get or Put
	timer *time.Timer
}

// Get returns a buffer put back earlier, or a new zero one.
func (l *List[T]) Get() *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = time.Now()
	if n := len(l.free); n > 0 {
		x := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		return x
	}
	return new(T)
}

// Put gives x back for a later Get; x must not be used after.
func (l *List[T]) Put(x *T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = time.Now()
	l.free = append(l.free, x)
	if l.timer == nil {
		l.timer = time.AfterFunc(l.Idle, l.expire)
	} else {
		l.timer.Reset(l.Idle)
	}
}

// Len is how many buffers the list holds.
func (l *List[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.free)
}

// expire drops the buffers if none was used for Idle, or waits again.
func (l *List[T]) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wait := l.Idle - time.Since(l.last); wait > 0 {
		l.timer.Reset(wait)
		return
	}
	clear(l.free)
	l.free = nil
}

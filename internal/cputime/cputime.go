// Package cputime reads the CPU time this process has used: what a run
// report prices as compute, and what benchmarks divide by on a machine
// shared with other work; and the processor time it has held, used or
// not, which is what a machine or a container is billed for.
package cputime

import (
	"runtime"
	"sync"
	"time"
)

// held is the processor time the process has held up to last.
var held = struct {
	sync.Mutex
	last time.Time
	sum  time.Duration
}{last: time.Now()}

// Held returns the processor time this process has held since it
// started (since this package was initialised, in its first moments):
// its wall time times the processors the Go runtime runs it on
// (GOMAXPROCS: a container's CPU limit, else the machine's, unless set
// otherwise), busy or idle. Each call adds the time since the last at
// the count of processors then, so a count that changes is followed as
// often as the caller asks.
func Held() time.Duration {
	held.Lock()
	defer held.Unlock()
	now := time.Now()
	held.sum += now.Sub(held.last) * time.Duration(runtime.GOMAXPROCS(0))
	held.last = now
	return held.sum
}

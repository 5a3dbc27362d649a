package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCounts: a busy loop shows in the process's CPU time, which
// never goes back. The loop spins until 20 ms of CPU are counted; the
// minute is a guard against a count that never moves, not a measure.
func TestProcessCounts(t *testing.T) {
	before := Process()
	if before <= 0 {
		t.Fatalf("the process has used %s of CPU", before)
	}
	guard, last := time.Now().Add(time.Minute), before
	for x := 0; ; x++ {
		now := Process()
		if now < last {
			t.Fatalf("the CPU time went back from %s to %s", last, now)
		}
		if now-before >= 20*time.Millisecond {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("a minute of a busy loop (%d turns) counted %s of CPU", x, now-before)
		}
		last = now
	}
}

// TestHeld: the time held grows by at least the wall time slept times
// the processors, and never goes back.
func TestHeld(t *testing.T) {
	before := Held()
	const nap = 20 * time.Millisecond
	time.Sleep(nap)
	after := Held()
	if min := nap * time.Duration(runtime.GOMAXPROCS(0)); after-before < min {
		t.Errorf("held %s over a %s sleep on %d processors, want at least %s", after-before, nap, runtime.GOMAXPROCS(0), min)
	}
	if again := Held(); again < after {
		t.Errorf("the time held went back from %s to %s", after, again)
	}
}

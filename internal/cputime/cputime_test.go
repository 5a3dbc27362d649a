package cputime

import (
	"testing"
	"time"
)

// TestProcessCounts: a busy loop of some milliseconds shows in the
// process's CPU time, which never goes back.
func TestProcessCounts(t *testing.T) {
	before := Process()
	x, start := 0, time.Now()
	for time.Since(start) < 50*time.Millisecond {
		x++
	}
	if after := Process(); after-before < 20*time.Millisecond || before <= 0 {
		t.Errorf("CPU time %s before a 50 ms busy loop (%d turns), %s after", before, x, after)
	}
}

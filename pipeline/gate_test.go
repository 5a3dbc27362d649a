package pipeline

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGate: of many loops asking at once, one goes through; within the
// period none does again; a gate whose period has passed opens again.
func TestGate(t *testing.T) {
	var g gate
	var through atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if g.open(time.Hour) {
				through.Add(1)
			}
		})
	}
	wg.Wait()
	if n := through.Load(); n != 1 {
		t.Fatalf("%d of 64 loops went through, want 1", n)
	}
	if g.open(time.Hour) {
		t.Error("the gate opened again within its period")
	}
	g.last.Add(-int64(time.Hour))
	if !g.open(time.Hour) {
		t.Error("the gate stayed shut after its period")
	}
}

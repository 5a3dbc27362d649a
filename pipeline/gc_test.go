package pipeline

import (
	"runtime/debug"
	"testing"
)

// TestGCSettingsApply: Apply sets the collector's target and soft limit
// and returns the ones it replaced, so that applying those puts the
// process back as it was.
func TestGCSettingsApply(t *testing.T) {
	was := GCSettings{Percent: debug.SetGCPercent(150), MemoryLimit: debug.SetMemoryLimit(3 << 30)}
	defer was.Apply()
	prev := WorkerGC.Apply()
	if want := (GCSettings{Percent: 150, MemoryLimit: 3 << 30}); prev != want {
		t.Fatalf("Apply returned %+v, want %+v", prev, want)
	}
	if got := debug.SetGCPercent(-1); got != WorkerGC.Percent {
		t.Errorf("GOGC %d after Apply, want %d", got, WorkerGC.Percent)
	}
	if got := debug.SetMemoryLimit(-1); got != WorkerGC.MemoryLimit {
		t.Errorf("memory limit %d after Apply, want %d", got, WorkerGC.MemoryLimit)
	}
	prev.Apply()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("memory limit %d after applying the previous settings, want %d", got, 3<<30)
	}
}

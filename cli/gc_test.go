package cli

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC checks that the worker processes' collector settings apply
// only where the environment sets none.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) }()
	for _, tc := range []struct {
		env                    map[string]string
		wantPercent, wantLimit int64
	}{
		{map[string]string{}, workerGCPercent, workerMemoryLimit},
		{map[string]string{"GOGC": "100"}, 77, workerMemoryLimit},
		{map[string]string{"GOMEMLIMIT": "2GiB"}, workerGCPercent, 1 << 40},
		{map[string]string{"GOGC": "off", "GOMEMLIMIT": "2GiB"}, 77, 1 << 40},
	} {
		// Sentinel settings that tuneGC must leave where the environment
		// chose.
		debug.SetGCPercent(77)
		debug.SetMemoryLimit(1 << 40)
		tuneGC(Env{Getenv: func(k string) string { return tc.env[k] }})
		if got := int64(debug.SetGCPercent(77)); got != tc.wantPercent {
			t.Errorf("%v: GC percent %d, want %d", tc.env, got, tc.wantPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
			t.Errorf("%v: memory limit %d, want %d", tc.env, got, tc.wantLimit)
		}
	}
}

package cli

import (
	"runtime/debug"
	"testing"

	"github.com/reversi-cloud/reversi/pipeline"
)

// TestTuneGC checks that the collector settings of worker processes and
// of rehearsals apply only where the environment sets none.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) }()
	for _, tc := range []struct {
		g                      pipeline.GCSettings
		env                    map[string]string
		wantPercent, wantLimit int64
	}{
		{pipeline.WorkerGC, map[string]string{}, 25, 768 << 20},
		{pipeline.WorkerGC, map[string]string{"GOGC": "100"}, 77, 768 << 20},
		{pipeline.WorkerGC, map[string]string{"GOMEMLIMIT": "2GiB"}, 25, 1 << 40},
		{pipeline.WorkerGC, map[string]string{"GOGC": "off", "GOMEMLIMIT": "2GiB"}, 77, 1 << 40},
		// A rehearsal's store of 1 GiB gets the workers' limit beside it.
		{simGC(1 << 30), map[string]string{}, 100, 768<<20 + 1<<30},
		{simGC(1 << 30), map[string]string{"GOGC": "25"}, 77, 768<<20 + 1<<30},
	} {
		// Sentinel settings that tuneGC must leave where the environment
		// chose.
		debug.SetGCPercent(77)
		debug.SetMemoryLimit(1 << 40)
		tuneGC(Env{Getenv: func(k string) string { return tc.env[k] }}, tc.g)
		if got := int64(debug.SetGCPercent(77)); got != tc.wantPercent {
			t.Errorf("%+v %v: GC percent %d, want %d", tc.g, tc.env, got, tc.wantPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
			t.Errorf("%+v %v: memory limit %d, want %d", tc.g, tc.env, got, tc.wantLimit)
		}
	}
}

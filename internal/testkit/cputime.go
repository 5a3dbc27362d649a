package testkit

import (
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
)

// CPUTime returns the user and system CPU time of the process so far.
// Benchmarks on a machine shared with other work divide by it rather
// than by the wall time, which counts the other work's turns too.
func CPUTime() time.Duration { return cputime.Process() }

// PerCPU reports, as metric unit, the CPU time since start (a CPUTime
// taken before the loop) over n items per op, in nanoseconds.
func PerCPU(b *testing.B, start time.Duration, n int64, unit string) {
	b.ReportMetric(float64((CPUTime()-start).Nanoseconds())/float64(b.N)/float64(n), unit)
}

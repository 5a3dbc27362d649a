package testkit

import (
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
)

// PerCPU reports, as metric unit, the CPU time since start (a
// cputime.Process taken before the loop) over n items per op, in
// nanoseconds. Benchmarks on a machine shared with other work divide by
// the process's CPU time rather than by the wall time, which counts the
// other work's turns too.
func PerCPU(b *testing.B, start time.Duration, n int64, unit string) {
	b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N)/float64(n), unit)
}

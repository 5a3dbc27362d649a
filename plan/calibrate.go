package plan

import (
	"runtime"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/cputime"
)

// Calibration is how fast this machine generates moves against the
// machine the model's CPU was measured on, which Config.CPUScale takes.
// Generation is a fair yardstick of a machine: the pipeline's CPU is a
// quarter generation, and the rest (sorting, packing, merging) moved
// with it between the machines measured (docs/performance.md: a Zen 3
// VM generated a child in 70 to 85 ns timed for ten seconds, 1.8 to 2.2
// times a Zen 5 VM's 38.5, and took 1.97 times its CPU for the whole of
// 8x8 ply 14).
type Calibration struct {
	// Here and Model are the seconds board.Children takes per child over
	// Board.Midgame's positions, on this machine and on the model's.
	Here, Model float64
}

// Scale is the factor by which this machine's CPU time exceeds the
// model machine's: Here over Model.
func (c Calibration) Scale() float64 { return c.Here / c.Model }

// Calibrate times this machine's move generation (MeasureGeneration,
// for CalibrationTime) against the model's (Model.GenerationPerEdge).
func (m *Model) Calibrate() Calibration {
	return Calibration{Here: MeasureGeneration(CalibrationTime), Model: m.GenerationPerEdge}
}

// CalibrationTime is how long a machine's generation is timed, for a
// plan and for a measurement. A shared VM's speed can change by half
// within seconds: the Zen 3 VM of docs/performance.md took 55 to 60 ns a
// child for a few seconds, then 100 to 105 for a few more, and so on.
// Timed for 3 s, it gave 60 to 92 ns; for 10 s, 70 to 85, about what a
// whole run got (75).
const CalibrationTime = 10 * time.Second

// MeasureGeneration returns the CPU seconds board.Children takes per
// child on this machine, over the 1,024 positions of 8x8's
// Board.Midgame, BenchmarkChildren's, generated over and over for about
// d: the process's CPU time over the children (its wall time where the
// system does not give CPU time), so that the machine's other work does
// not count but whatever slows this one's cores does, as in a run.
// Nothing else in the process should run meanwhile.
func MeasureGeneration(d time.Duration) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := board.MustNew(8)
	positions := b.Midgame(1024)
	kids := make([]board.Position, 0, 64)
	children, start, cpu := 0, time.Now(), cputime.Process()
	for time.Since(start) < d || children == 0 {
		for _, p := range positions {
			kids, _ = b.Children(p, kids[:0])
			children += len(kids)
		}
	}
	used := cputime.Process() - cpu
	if used <= 0 {
		used = time.Since(start)
	}
	return used.Seconds() / float64(children)
}

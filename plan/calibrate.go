package plan

import (
	"runtime"
	"time"

	"github.com/reversi-cloud/reversi/board"
)

// Calibration is how fast this machine generates moves against the
// machine the model's CPU was measured on, which Config.CPUScale takes.
// Generation is a fair yardstick of a machine: the pipeline's CPU is a
// quarter generation, and the rest (sorting, packing, merging) moved
// with it between the machines measured (docs/performance.md: a Zen 3
// VM took 2.3 times a Zen 5 VM's time to generate an edge, and 2.1
// times its CPU for the whole of 8x8 ply 14).
type Calibration struct {
	// Here and Model are the seconds board.Children takes per child over
	// Board.Midgame's positions, on this machine and on the model's.
	Here, Model float64
}

// Scale is the factor by which this machine's CPU time exceeds the
// model machine's: Here over Model.
func (c Calibration) Scale() float64 { return c.Here / c.Model }

// Calibrate times this machine's move generation (MeasureGeneration,
// about a second) against the model's (Model.GenerationPerEdge).
func (m *Model) Calibrate() Calibration {
	return Calibration{Here: MeasureGeneration(5, 200*time.Millisecond), Model: m.GenerationPerEdge}
}

// MeasureGeneration returns the seconds board.Children takes per child
// on this machine, over the 1,024 positions of 8x8's Board.Midgame, as
// board's BenchmarkChildren times it: the best of rounds rounds of about
// each, so that another process's use of the CPU in one round does not
// count. It keeps to one OS thread meanwhile.
func MeasureGeneration(rounds int, each time.Duration) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := board.MustNew(8)
	positions := b.Midgame(1024)
	kids := make([]board.Position, 0, 64)
	best := 0.0
	for range max(1, rounds) {
		children, start := 0, time.Now()
		for time.Since(start) < each || children == 0 {
			for _, p := range positions {
				kids, _ = b.Children(p, kids[:0])
				children += len(kids)
			}
		}
		if t := time.Since(start).Seconds() / float64(children); best == 0 || t < best {
			best = t
		}
	}
	return best
}

package plan

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// Calibration is how much CPU this machine takes for the pipeline's work
// against the machine the model's CPU was measured on, which
// Config.CPUScale takes.
//
// The yardstick is the pipeline itself: a small run (YardstickTarget),
// whose edges go through the same generation, sort, packing, merges and
// storage as a large run's; on the Intel VM its CPU an edge was within a
// sixth of the large runs'. Generation alone, the yardstick before, is a
// quarter of the pipeline's CPU and the rest does not move with it: an
// Intel VM generated a child as fast as the Zen 5 VM the model was
// measured on and took half as long again for a whole run, so plans
// calibrated on it came out 10% to 31% low (docs/performance.md).
type Calibration struct {
	// Here and Model are the CPU seconds an edge of the yardstick run
	// took on this machine and on the model's.
	Here, Model float64
}

// Scale is the factor by which this machine's CPU time exceeds the
// model machine's: Here over Model.
func (c Calibration) Scale() float64 { return c.Here / c.Model }

// Calibrate times the yardstick run on this machine (MeasureYardstick,
// for CalibrationTime) against the model's (Model.YardstickPerEdge).
func (m *Model) Calibrate(ctx context.Context) (Calibration, error) {
	if m.YardstickPerEdge == 0 {
		return Calibration{}, fmt.Errorf("the plan's model has no yardstick time of its machine to compare with")
	}
	here, err := MeasureYardstick(ctx, CalibrationTime)
	if err != nil {
		return Calibration{}, err
	}
	return Calibration{Here: here, Model: m.YardstickPerEdge}, nil
}

// CalibrationTime is how long a machine is timed, for a plan and for a
// measurement. A shared VM's speed can change by half within seconds:
// the Zen 3 VM of docs/performance.md generated a child in 55 to 60 ns
// for a few seconds, then in 100 to 105 for a few more, and so on. Timed
// for 3 s, it gave 60 to 92 ns; for 10 s, 70 to 85, about what a whole
// run got (75).
const CalibrationTime = 10 * time.Second

// YardstickTarget is the ply of the yardstick run: 8x8 to ply 11 with
// the default sizes, 29.7 million edges in all and a few seconds on two
// cores, whose ply 11 has hundreds of expansion tasks and a dozen bucket
// merges, as a large run's plies do.
const YardstickTarget = 11

// MeasureYardstick returns the CPU seconds an edge (every ply's edges)
// of the yardstick run takes on this machine: the pipeline to 8x8 ply
// YardstickTarget with the default sizes, on embedded storage in the
// system's temporary directory, a worker loop per processor and the
// collector set as for worker processes (pipeline.WorkerGC) as enumerate
// runs, over and over for about d and at least once. It is the process's
// CPU time over the edges (its wall time times its processors where the
// system does not give CPU time), so that the machine's other work does
// not count but whatever slows this one's cores does, as in a run.
//
// Nothing else in the process should run meanwhile. Every machine is
// timed the same way, in a process that has run nothing before, as
// enumerate -plan -calibrate is (plan/internal/measure starts one after
// its run), so that nothing left from earlier work sets one machine's
// figure apart from another's.
func MeasureYardstick(ctx context.Context, d time.Duration) (float64, error) {
	defer pipeline.WorkerGC.Apply().Apply()
	return measureRuns(ctx, YardstickTarget, d)
}

// measureRuns is MeasureYardstick with runs to target.
func measureRuns(ctx context.Context, target int, d time.Duration) (float64, error) {
	var edges int64
	start, cpu := time.Now(), cputime.Process()
	for edges == 0 || time.Since(start) < d {
		n, err := yardstickRun(ctx, target)
		if err != nil {
			return 0, fmt.Errorf("timing the yardstick run to ply %d: %w", target, err)
		}
		if n == 0 {
			return 0, fmt.Errorf("the yardstick run to ply %d has no edges", target)
		}
		edges += n
	}
	used := cputime.Process() - cpu
	if used <= 0 {
		used = time.Since(start) * time.Duration(runtime.GOMAXPROCS(0))
	}
	return used.Seconds() / float64(edges), nil
}

// yardstickRun runs the pipeline to 8x8 ply target as enumerate does
// (metered, spilling to disk), and returns the run's edges.
func yardstickRun(ctx context.Context, target int) (int64, error) {
	be, err := embedded.Open(embedded.Config{SpillToDisk: true})
	if err != nil {
		return 0, fmt.Errorf("opening embedded storage: %w", err)
	}
	defer be.Close()
	cfg := pipeline.DefaultRunConfig()
	cfg.Name, cfg.Target = "yardstick", target
	rep, err := pipeline.RunLocal(ctx, storage.NewMetered(be), cfg.WithDefaults(), runtime.GOMAXPROCS(0), pipeline.WorkerConfig{}, nil, nil)
	if err != nil {
		return 0, err
	}
	return rep.Edges(), nil
}

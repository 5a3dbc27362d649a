package plan

import (
	"math"
	"testing"
	"time"
)

// TestCPUScale: a plan for machines that take k times the model's CPU
// has k times its CPU seconds and their cost, ply by ply, and the same
// transactions; where the CPU binds (storage calls of a microsecond), its
// wall time grows with it, and a deadline needs more workers. Zero is
// the model's machine.
func TestCPUScale(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	planFor := func(scale float64, deadline time.Duration) *Plan {
		cfg := defaultConfig(13)
		cfg.CPUScale, cfg.Deadline, cfg.Latency = scale, deadline, time.Microsecond
		if deadline > 0 {
			cfg.Workers = 0
		}
		p, err := m.Make(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, zero, slow := planFor(1, 0), planFor(0, 0), planFor(3, 0)
	if zero.CPUScale != 1 || zero.Total.CPUSeconds != base.Total.CPUSeconds || slow.CPUScale != 3 {
		t.Errorf("scales %g and %g planned for 0 and 3; %g CPU s at 0, %g at 1", zero.CPUScale, slow.CPUScale, zero.Total.CPUSeconds, base.Total.CPUSeconds)
	}
	if slow.CPUPerEdge != 3*base.CPUPerEdge || slow.CPUPerSegment != 3*base.CPUPerSegment {
		t.Errorf("CPU per edge %g and per segment %g at 3 times, %g and %g at 1", slow.CPUPerEdge, slow.CPUPerSegment, base.CPUPerEdge, base.CPUPerSegment)
	}
	// The total's transactions count the idle loops' polls too, which
	// grow with the wall time.
	for i, y := range append(slow.Plies, slow.Total) {
		b, polls := base.Total, slow.Polling.Transactions-base.Polling.Transactions
		if i < len(base.Plies) {
			b, polls = base.Plies[i], 0
		}
		if math.Abs(y.CPUSeconds-3*b.CPUSeconds) > 1e-9*y.CPUSeconds || math.Abs(y.ComputeUSD-3*b.ComputeUSD) > 1e-9*y.ComputeUSD || y.Transactions != b.Transactions+polls {
			t.Errorf("ply %d: %g CPU s ($%g, %d transactions) at 3 times, %g ($%g, %d) at 1", y.Ply, y.CPUSeconds, y.ComputeUSD, y.Transactions, b.CPUSeconds, b.ComputeUSD, b.Transactions)
		}
		if y.Binding == BoundCPU && y.CPUSeconds/float64(slow.Workers) > b.Seconds && y.Seconds <= b.Seconds {
			t.Errorf("ply %d is bound by its CPU, %g s of it on %d workers, and takes %g s at 3 times the CPU, %g at 1", y.Ply, y.CPUSeconds, slow.Workers, y.Seconds, b.Seconds)
		}
	}
	// With calls of a microsecond, the CPU sets the pace of every ply.
	if math.Abs(slow.Total.Seconds-3*base.Total.Seconds) > 1e-6*slow.Total.Seconds {
		t.Errorf("to ply 13 in %g s at 3 times the CPU, %g at 1", slow.Total.Seconds, base.Total.Seconds)
	}
	if w1, w3 := planFor(1, time.Minute).Workers, planFor(3, time.Minute).Workers; w3 <= w1 {
		t.Errorf("a minute to ply 13 takes %d workers at 3 times the CPU, %d at 1", w3, w1)
	}
}

// TestCalibration: the default model knows its machine's generation time
// (38.5 ns a child, board's BenchmarkChildren on it the day of its runs),
// this machine's is measured in earnest, and the scale is the ratio.
func TestCalibration(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if m.GenerationPerEdge != 38.5e-9 {
		t.Errorf("the model's machine generated a child in %g s, want 38.5 ns (testdata)", m.GenerationPerEdge)
	}
	// A child takes tens of nanoseconds on the machines measured: more
	// than a cycle, and far less than the 100 us of a machine a thousand
	// times busier.
	if g := MeasureGeneration(20 * time.Millisecond); !(g > 1e-10 && g < 1e-4) {
		t.Errorf("this machine generates a child in %g s", g)
	}
	if c := (Calibration{Here: 90e-9, Model: 38.5e-9}); math.Abs(c.Scale()-90/38.5) > 1e-12 {
		t.Errorf("%+v: scale %g, want %g", c, c.Scale(), 90/38.5)
	}
}

package plan

import (
	"context"
	"math"
	"slices"
	"strings"
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

// TestCalibration: the default model knows its machine's CPU for the
// yardstick run (the measurement its CPU is fitted to says), a machine's
// is measured in earnest on a real run of the pipeline, and the scale is
// the ratio.
func TestCalibration(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Measured()
	if err != nil {
		t.Fatal(err)
	}
	fitted := false
	for _, r := range runs {
		if r.YardstickNs <= 0 {
			t.Errorf("%s: no yardstick time of its machine", describe(r))
		}
		fitted = fitted || r.YardstickNs*1e-9 == m.YardstickPerEdge && slices.ContainsFunc(m.Fitted, func(f string) bool {
			return strings.HasPrefix(f, "CPU: "+describe(r))
		})
	}
	if !fitted {
		t.Errorf("the model's yardstick, %g s an edge, is not that of the run its CPU is fitted to (%q)", m.YardstickPerEdge, m.Fitted)
	}
	// An edge takes hundreds of nanoseconds on the machines measured:
	// more than a cycle, and far less than the millisecond of a machine
	// a thousand times busier. Ply 6 keeps the test short; one run at
	// least is timed.
	if y, err := measureRuns(context.Background(), 6, 0); err != nil || !(y > 1e-10 && y < 1e-3) {
		t.Errorf("this machine took %g s an edge of a run to ply 6 (%v)", y, err)
	}
	if _, err := (&Model{}).Calibrate(context.Background()); err == nil {
		t.Error("a model without its machine's yardstick calibrated")
	}
	if c := (Calibration{Here: 420e-9, Model: 280e-9}); math.Abs(c.Scale()-1.5) > 1e-12 {
		t.Errorf("%+v: scale %g, want 1.5", c, c.Scale())
	}
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/plan"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

func TestPlanWritesEveryPly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr := runCmd(t, Enumerate, "-plan", "-plies", "15", "-workers", "4", "-json", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Ply 14 is the last counted (docs/reference.md), ply 15 extrapolated.
	for _, want := range []string{"capacity plan (nothing was run): 8x8 through ply 15, 4 workers", "912004167", "6158976460 ", "41881039928*", "binding", "tx USD", "CPU USD", "a vCPU hour (-price-vcpu-hour)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Workers int                          `json:"workers"`
		Plies   []map[string]json.RawMessage `json:"plies"`
		Polling plan.Polling                 `json:"polling"`
		Total   map[string]json.RawMessage   `json:"total"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Plies) != 16 || p.Workers != 4 {
		t.Fatalf("%d plies for %d workers, want plies 0 to 15 for 4", len(p.Plies), p.Workers)
	}
	for i, y := range p.Plies {
		var ply, positions int64
		if json.Unmarshal(y["ply"], &ply) != nil || json.Unmarshal(y["positions"], &positions) != nil || ply != int64(i) || positions <= 0 {
			t.Errorf("entry %d: ply %s, positions %s", i, y["ply"], y["positions"])
		}
		for _, k := range []string{"edges", "units", "worker_peak_bytes", "transactions", "transactions_by_category", "stored_bytes", "bytes_written", "bytes_read", "cost_usd", "compute_usd", "total_usd", "accounts", "queue_shards", "table_partitions", "binding_limit"} {
			if _, ok := y[k]; !ok {
				t.Errorf("entry %d lacks %q", i, k)
			}
		}
	}
	if _, ok := p.Total["binding_limit"]; !ok {
		t.Errorf("the total lacks binding_limit: %v", p.Total)
	}
	// Polling has a row of its own: its transactions as control and in
	// all, and in the total's.
	var total, plies int64
	for _, y := range p.Plies {
		var n int64
		if err := json.Unmarshal(y["transactions"], &n); err != nil {
			t.Fatal(err)
		}
		plies += n
	}
	if err := json.Unmarshal(p.Total["transactions"], &total); err != nil {
		t.Fatal(err)
	}
	tx := fmt.Sprint(p.Polling.Transactions)
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 20 && f[0] == "polling" && f[6] == tx && f[7] == tx {
			rows++
		}
	}
	if p.Polling.Transactions <= 0 || p.Polling.Workers != 4 || total != plies+p.Polling.Transactions || rows != 1 {
		t.Errorf("polling %+v; total %d transactions for the plies' %d; %d rows of it in the table:\n%s", p.Polling, total, plies, rows, stdout)
	}
}

// TestPlanPricesCompute: -price-vcpu-hour prices the plan's CPU
// seconds, each ply's and the total's, and its total cost adds the
// transactions'; the storage prices keep their source.
func TestPlanPricesCompute(t *testing.T) {
	p, stdout := planned(t, "-price-vcpu-hour", "2.5")
	if p.VCPUHour != 2.5 || p.Prices.Source != report.PricesSource {
		t.Errorf("the plan's vCPU hour costs $%g, want 2.5; its storage prices are %q, want the defaults'", p.VCPUHour, p.Prices.Source)
	}
	for _, y := range append(p.Plies, p.Total) {
		if want := y.CPUSeconds / 3600 * 2.5; y.ComputeUSD <= 0 || math.Abs(y.ComputeUSD-want) > 1e-9*want || math.Abs(y.TotalUSD-y.CostUSD-y.ComputeUSD) > 1e-12 {
			t.Errorf("ply %d: %g CPU s cost $%g at $2.5 an hour, want $%g; total $%g with $%g of transactions", y.Ply, y.CPUSeconds, y.ComputeUSD, want, y.TotalUSD, y.CostUSD)
		}
	}
	if want := fmt.Sprintf("USD: the two together, $%.2f for the run", p.Total.TotalUSD); !strings.Contains(stdout, want) {
		t.Errorf("the plan lacks %q:\n%s", want, stdout)
	}
}

// TestPlanScalesCPU: -cpu-scale reaches the plan, which says so (how it
// scales each ply is plan.TestCPUScale's); -calibrate measures the scale here,
// and the plan prints the two yardstick times it is the ratio of.
func TestPlanScalesCPU(t *testing.T) {
	base, _ := planned(t)
	scaled, stdout := planned(t, "-cpu-scale", "2.5")
	if base.CPUScale != 1 || scaled.CPUScale != 2.5 || !strings.Contains(stdout, "scaled by 2.5 (-cpu-scale)") {
		t.Errorf("CPU scales %g and %g, want 1 and 2.5; the plan says:\n%s", base.CPUScale, scaled.CPUScale, stdout)
	}
	// The flag reaches the model, whose scaling plan.TestCPUScale checks
	// ply by ply.
	if b, y := base.Total, scaled.Total; math.Abs(y.CPUSeconds-2.5*b.CPUSeconds) > 1e-9*y.CPUSeconds {
		t.Errorf("%g CPU s at 2.5 times the CPU, %g at 1", y.CPUSeconds, b.CPUSeconds)
	}
	calibrated, stdout := planned(t, "-calibrate")
	m, err := plan.Default()
	if err != nil {
		t.Fatal(err)
	}
	var target int
	var here, model float64
	i := strings.Index(stdout, "(-calibrate: ")
	if i < 0 {
		t.Fatalf("the calibrated plan does not say what it measured:\n%s", stdout)
	}
	if _, err := fmt.Sscanf(stdout[i:], "(-calibrate: the yardstick run, 8x8 to ply %d, took %g CPU ns an edge here, %g on the model's machine)", &target, &here, &model); err != nil ||
		target != plan.YardstickTarget || here <= 0 || math.Abs(model-1e9*m.YardstickPerEdge) > 0.5 {
		t.Fatalf("%v; to ply %d, %g ns here, %g on the model's machine (want %.1f, measured there) in %q", err, target, here, model, 1e9*m.YardstickPerEdge, stdout[i:i+120])
	}
	// The printed times are rounded to a nanosecond.
	if want := here / model; math.Abs(calibrated.CPUScale-want) > 0.6/model*max(1, want) {
		t.Errorf("calibrated CPU scale %g, want about %g (%g ns against %g)", calibrated.CPUScale, want, here, model)
	}
}

// planned runs enumerate -plan -plies 12 with args and returns the plan
// it wrote with -json and what it printed.
func planned(t *testing.T, args ...string) (plan.Plan, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr := runCmd(t, Enumerate, append([]string{"-plan", "-plies", "12", "-json", out}, args...)...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return p, stdout
}

func TestPlanDeadlineGivesWorkers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	// One worker takes about 700 s to ply 13 by the model (its CPU, or
	// its storage calls' latency where that is longer): two minutes
	// need several.
	code, stdout, stderr := runCmd(t, Enumerate, "-plan", "-plies", "13", "-deadline", "2m", "-json", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		Workers  int     `json:"workers"`
		Deadline float64 `json:"deadline_seconds"`
		Total    struct {
			Seconds float64 `json:"seconds"`
		} `json:"total"`
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Deadline != 120 || p.Workers < 2 || p.Total.Seconds > 120 || !strings.Contains(stdout, "a deadline of 2m0s") {
		t.Errorf("deadline %g s: %d workers taking %g s; table:\n%s", p.Deadline, p.Workers, p.Total.Seconds, stdout)
	}
}

func TestPlanBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-plan", "-board", "6"}, "-plan -board 6: the plan's model is measured on 8x8 only"},
		{[]string{"-plan", "-board", "4", "-plies", "5"}, "-plan -board 4"},
		{[]string{"-plan", "-deadline", "1h", "-workers", "3"}, "not both"},
		{[]string{"-deadline", "1h"}, "-deadline is for -plan"},
		{[]string{"-plan", "-deadline", "0s"}, "-deadline 0s: must be more than zero"},
		{[]string{"-plan", "-engine", "reference"}, "-plan runs nothing; leave out -engine"},
		{[]string{"-plan", "-data", "d"}, "leave out -data"},
		{[]string{"-plan", "-verify"}, "leave out -verify"},
		{[]string{"-plan", "-merge-fan-in", "1"}, "-merge-fan-in 1: must be 2 to 4096"},
		{[]string{"-plan", "-plies", "61"}, "-plies 61"},
		{[]string{"-plan", "-workers", "0"}, "-workers 0"},
		{[]string{"-plan", "-price-vcpu-hour", "-0.5"}, "-price-vcpu-hour -0.5: a price must be zero or more"},
		{[]string{"-plan", "-price-vcpu-hour", "NaN"}, "-price-vcpu-hour NaN: a price must be zero or more"},
		{[]string{"-cpu-scale", "2"}, "-cpu-scale is about the CPU of a plan; it is for -plan"},
		{[]string{"-calibrate", "-plies", "3"}, "-calibrate is about the CPU of a plan; it is for -plan"},
		{[]string{"-plan", "-calibrate", "-cpu-scale", "2"}, "-cpu-scale (given) or -calibrate (measured here), not both"},
		{[]string{"-plan", "-cpu-scale", "0"}, "-cpu-scale 0: must be more than zero"},
		{[]string{"-plan", "-cpu-scale", "-1"}, "-cpu-scale -1: must be more than zero"},
		{[]string{"-plan", "-cpu-scale", "NaN"}, "-cpu-scale NaN: must be more than zero"},
		{[]string{"-plan", "-cpu-scale", "+Inf"}, "-cpu-scale +Inf: must be more than zero"},
	} {
		code, _, stderr := runCmd(t, Enumerate, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

func TestPlanHelp(t *testing.T) {
	code, stdout, _ := runCmd(t, Enumerate, "-h")
	if code != ExitOK || !strings.Contains(stdout, "-plan") || !strings.Contains(stdout, "-deadline") {
		t.Errorf("exit %d; -h does not explain -plan and -deadline:\n%s", code, stdout)
	}
}

// TestSeedTakesShardsFromThePlan: seed sizes a run's shards for its
// -fleet (1 by default) by the plan, unless they are given; runs the
// model does not cover keep one of each.
func TestSeedTakesShardsFromThePlan(t *testing.T) {
	m, err := plan.Default()
	if err != nil {
		t.Fatal(err)
	}
	shards := func(workers int) (queues, partitions int) {
		p, err := m.Make(plan.Config{Target: 13, Workers: workers, Limits: plan.StandardV2, Prices: report.DefaultPrices})
		if err != nil {
			t.Fatal(err)
		}
		return p.Shards()
	}
	queues, partitions := shards(400)
	if queues < 2 || partitions < 2 {
		t.Fatalf("the plan gives %d queue shards and %d partition shards for 400 workers to ply 13; want a fleet that needs several", queues, partitions)
	}
	// One worker as fast as the measured runs' already resolves faster
	// than one table partition takes.
	oneQueues, onePartitions := shards(1)
	if oneQueues > queues || onePartitions > partitions {
		t.Fatalf("the plan gives one worker %d and %d shards, more than 400 workers' %d and %d", oneQueues, onePartitions, queues, partitions)
	}
	for _, tc := range []struct {
		name              string
		args              []string
		queues, partition int
	}{
		{"planned", []string{"-plies", "13", "-fleet", "400"}, queues, partitions},
		{"given", []string{"-plies", "13", "-fleet", "400", "-queue-shards", "3"}, 3, partitions},
		{"one worker", []string{"-plies", "13"}, oneQueues, onePartitions},
		{"other board", []string{"-board", "6", "-plies", "13", "-fleet", "400"}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-run", "planned", "-storage", "embedded", "-data", dir}, tc.args...)
			if code, _, stderr := runCmd(t, Seed, args...); code != ExitOK {
				t.Fatalf("seed: exit %d: %s", code, stderr)
			}
			be, err := embedded.Open(embedded.Config{Dir: dir, Persist: true})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			r, err := pipeline.OpenRun(context.Background(), be, "planned")
			if err != nil {
				t.Fatal(err)
			}
			if r.Config.QueueShards != tc.queues || r.Config.PartitionShards != tc.partition {
				t.Errorf("run has %d queue shards and %d partition shards, want %d and %d", r.Config.QueueShards, r.Config.PartitionShards, tc.queues, tc.partition)
			}
		})
	}
}

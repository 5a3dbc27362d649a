package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/plan"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
	"github.com/reversi-cloud/reversi/task"
)

// planFlags are enumerate's -plan and -deadline: a capacity plan instead
// of a run.
type planFlags struct {
	on        bool
	deadline  time.Duration
	cpuScale  float64
	calibrate bool
}

func (f *planFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.on, "plan", false, "run nothing: print a capacity plan for 8x8 through -plies, per ply: positions, edges, storage transactions by category, bytes stored and moved, CPU and wall time, the cost of the transactions and of the CPU at list prices (the -price flags) and the two together, and the storage accounts, work-queue shards and table partitions that keep it within Azure's scalability targets, naming the binding limit; -json writes it")
	fs.DurationVar(&f.deadline, "deadline", 0, "with -plan: the wall time the run must take; the plan gives the workers (one CPU each) it needs, instead of planning for -workers")
	fs.Float64Var(&f.cpuScale, "cpu-scale", 1, "with -plan: the workers' CPU time for the same work over that of the machine the plan's model was measured on (2 for machines twice as slow; -calibrate measures it for this machine)")
	fs.BoolVar(&f.calibrate, "calibrate", false, "with -plan: plan for machines like this one: time a small run of the pipeline here (8x8 to ply 11, over and over for ten seconds, in the system's temporary directory) against the model's machine and scale the plan's CPU by the ratio, which the plan prints for -cpu-scale")
}

// runFlagsUnplanned are enumerate's flags that only a run uses.
var runFlagsUnplanned = []string{"engine", "storage", "data", "run", "verify", "http", "start", "solve", "position", "moves", "visibility"}

// validate refuses combinations that make no sense with or without -plan.
func (f *planFlags) validate(fs *flag.FlagSet) error {
	if !f.on {
		if given(fs, "deadline") {
			return usagef("-deadline is for -plan; a run takes the time it takes")
		}
		for _, name := range []string{"cpu-scale", "calibrate"} {
			if given(fs, name) {
				return usagef("-%s is about the CPU of a plan; it is for -plan", name)
			}
		}
		return nil
	}
	for _, name := range runFlagsUnplanned {
		if given(fs, name) {
			return usagef("-plan runs nothing; leave out -%s", name)
		}
	}
	if given(fs, "deadline") && given(fs, "workers") {
		return usagef("-plan takes -workers (and gives the time) or -deadline (and gives the workers), not both")
	}
	if given(fs, "cpu-scale") && f.calibrate {
		return usagef("-plan takes -cpu-scale (given) or -calibrate (measured here), not both")
	}
	if !(f.cpuScale > 0) || math.IsInf(f.cpuScale, 1) {
		return usagef("-cpu-scale %v: must be more than zero (1 is the model's machine)", f.cpuScale)
	}
	return positive(fs, "deadline")
}

// plan prints the capacity plan of cfg and writes it to jsonOut if set;
// -calibrate says on stderr that it is timing the machine, unless quiet.
func (f *planFlags) plan(env Env, cfg pipeline.RunConfig, workers int, jsonOut string, cf *costFlags, quiet bool) error {
	if cfg.Board != 8 {
		return usagef("-plan -board %d: the plan's model is measured on 8x8 only", cfg.Board)
	}
	m, err := plan.Default()
	if err != nil {
		return err
	}
	if workers < 1 || workers > 1<<20 {
		return usagef("-workers %d: must be 1 or more", workers)
	}
	scale, measured := f.cpuScale, ""
	if f.calibrate {
		if !quiet {
			fmt.Fprintf(env.Stderr, "-calibrate: timing this machine: the pipeline to 8x8 ply %d, over and over for %v...\n", plan.YardstickTarget, plan.CalibrationTime)
		}
		// Interrupted, the yardstick's run stops and removes its
		// temporary directory.
		ctx, stop := interruptible(context.Background(), env, "enumerate", "interrupted again: the yardstick's directory may be left in the system's temporary directory")
		c, err := m.Calibrate(ctx)
		interrupted := ctx.Err() != nil
		stop()
		switch {
		case interrupted:
			return interruptedError{"-calibrate interrupted: no plan"}
		case err != nil:
			return fmt.Errorf("-calibrate: %w", err)
		}
		scale = c.Scale()
		measured = fmt.Sprintf(" (-calibrate: the yardstick run, 8x8 to ply %d, took %.0f CPU ns an edge here, %.0f on the model's machine)", plan.YardstickTarget, 1e9*c.Here, 1e9*c.Model)
	}
	p, err := m.Make(plan.Config{Target: cfg.Target, Workers: workers, Deadline: f.deadline, Sizes: cfg.Sizes, Limits: plan.StandardV2, Prices: cf.p, VCPUHour: cf.vcpuHour, CPUScale: scale})
	if err != nil {
		return err
	}
	if err := writePlan(env.Stdout, p, measured); err != nil {
		return err
	}
	if jsonOut == "" {
		return nil
	}
	return report.WriteJSONFile(jsonOut, "the plan", p)
}

// planShards sets what -queue-shards and -partition-shards leave out from
// the capacity plan of cfg's run for workers worker loops, so a run is
// sized for its fleet. Runs the model does not cover (boards other than
// 8x8, other start positions) keep one of each.
func planShards(fs *flag.FlagSet, cfg *pipeline.RunConfig, workers int) error {
	if given(fs, "queue-shards") && given(fs, "partition-shards") || cfg.Board != 8 || cfg.Start != board.MustNew(8).Start() {
		return nil
	}
	m, err := plan.Default()
	if err != nil {
		return err
	}
	p, err := m.Make(plan.Config{Target: cfg.Target, Workers: workers, Sizes: cfg.Sizes, Limits: plan.StandardV2, Prices: report.DefaultPrices})
	if err != nil {
		return err
	}
	queues, partitions := p.Shards()
	if !given(fs, "queue-shards") {
		cfg.QueueShards, cfg.CompensationShards = queues, queues
	}
	if !given(fs, "partition-shards") {
		cfg.PartitionShards = partitions
	}
	return nil
}

// writePlan prints a plan as a table, then what it assumed; calibrated
// says how its CPU scale was measured, if it was.
func writePlan(w io.Writer, p *plan.Plan, calibrated string) error {
	how := fmt.Sprintf("%d workers (one CPU each)", p.Workers)
	if p.DeadlineSeconds > 0 {
		how = fmt.Sprintf("a deadline of %s: %s", time.Duration(p.DeadlineSeconds*float64(time.Second)), how)
	}
	fmt.Fprintf(w, "capacity plan (nothing was run): %dx%d through ply %d, %s\n", p.Board, p.Board, p.TargetPly, how)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "ply\tpositions\tedges\ttx enum\ttx dedup\ttx backtrack\ttx control\ttx total\tstored\tmoved\tCPU s\twall s\ttx USD\tCPU USD\tUSD\taccounts\tqueues\tpartitions\tpart. shards\tbinding\t\n")
	row := func(name string, y plan.Ply) {
		mark := ""
		if y.Extrapolated {
			mark = "*"
		}
		c := y.TransactionsByCategory
		fmt.Fprintf(tw, "%s\t%d%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%.0f\t%.0f\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d\t%d\t%s\t\n",
			name, y.Positions, mark, y.Edges, c[task.CategoryEnumeration], c[task.CategoryDedup], c[task.CategoryBacktrack], c[task.CategoryControl],
			y.Transactions, bytesText(y.StoredBytes), bytesText(y.BytesWritten+y.BytesRead), y.CPUSeconds, y.Seconds, y.CostUSD, y.ComputeUSD, y.TotalUSD,
			y.Accounts, y.QueueShards, y.Partitions, y.PartitionShards, y.Binding)
	}
	for _, y := range p.Plies {
		row(fmt.Sprint(y.Ply), y)
	}
	// Polling is no ply's: control transactions and their cost only.
	fmt.Fprintf(tw, "polling\t-\t-\t-\t-\t-\t%d\t%d\t-\t-\t-\t-\t%.4f\t-\t%.4f\t-\t-\t-\t-\t-\t\n",
		p.Polling.Transactions, p.Polling.Transactions, p.Polling.CostUSD, p.Polling.CostUSD)
	row("total", p.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nsizes and merge levels (-blob-positions %d -bucket-blobs %d -grow-from %d -merge-fan-in %d):\n",
		p.Sizes.BlobPositions, p.Sizes.BucketBlobs, p.Sizes.GrowFrom, p.Sizes.MergeFanIn)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "ply\tblob positions\tbucket blobs\tfinal blobs\texpansions in\tbuckets\tcombines\tsegments read\ttx/edge\tfan-in\tworker peak\t\n")
	for _, y := range p.Plies {
		u := y.Units
		combines := "-"
		if len(u.Levels) > 0 {
			parts := make([]string, len(u.Levels))
			for k, l := range u.Levels {
				parts[k] = fmt.Sprintf("%d x %d", l.Groups, l.Ranges)
			}
			combines = strings.Join(parts, ", ")
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%s\t%.0f\t%.2e\t%.0f\t%s\t\n", y.Ply, u.BlobPositions, u.BucketBlobs, u.Finals, u.Tasks, u.Buckets,
			combines, u.Segments, float64(y.Transactions)/float64(max(1, y.Edges)), u.FanIn, bytesText(y.WorkerPeakBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	l := p.Limits
	queues, partitions := p.Shards()
	_, err := fmt.Fprintf(w, `* positions past ply %d (the last counted) grow by a constant factor: extrapolated, not known.
tx: storage transactions of the ply's messages by category (a dequeue that finds a message is its ply's; one that finds none is polling's); stored: blob data kept after the run; moved: bytes written and read. On one machine's embedded backend the run peaks at about %s of disk.
polling: the worker loops' dequeues that find no message, %.3g calls a loop a second over the plan's wall time (%d loops x %.0f s): %.2f polls per longest back-off (%s, a worker process's; enumerate's own loops back off longer) of %d calls each (the work queue's shards, at most %d, and the compensation queue), fitted to sim runs; included in the total's tx control, tx total and USD.
CPU: %.3g s per edge handled and %.3g ms per segment the merges read, measured on the embedded backend (its storage's CPU included) and scaled by %.3g (-cpu-scale)%s, %.0f ns for each of the run's edges; wall: the larger of CPU and the storage calls' latency (10 ms a call, one at a time a worker), over the workers. Edges per position grow %.3f a ply past the measured plies.
tx USD: the transactions at %s; CPU USD: the CPU seconds at $%.4g a vCPU hour (-price-vcpu-hour); USD: the two together, $%.2f for the run; keeping its blobs adds $%.4f a month.
accounts, queues, partitions: units = ceil(rate / (target x %.0f%%)), the rate being the ply's over its wall time (at least 1 s), for a standard general-purpose v2 account's targets: %.0f requests/s, %.0f Gbps in, %.0f Gbps out per account; %.0f messages/s per queue; %.0f entities/s per table partition. part. shards: the same for the busiest partition alone, whose rows a run spreads over -partition-shards partitions. binding: the limit the ply needs the most units of; CPU when one of each suffices.
combines: groups x ranges of a ply's combine level; segments read: by both merge steps; fan-in: the most runs one merge step reads; worker peak: the memory one worker loop holds for the ply's largest task.
run settings: -queue-shards %d -partition-shards %d (the most any ply needs; seed and enumerate choose them from this plan when they are left out).
model fitted to: %s
`, pipeline.CountedPlies()-1, bytesText(p.EmbeddedDiskBytes),
		p.Polling.CallsPerLoopSecond, p.Polling.Workers, p.Polling.Seconds, plan.PollsPerBackOff, time.Duration(p.Polling.PollMaxSeconds*float64(time.Second)), p.Polling.CallsPerPoll, shardedqueue.Probes,
		p.CPUPerEdge, 1e3*p.CPUPerSegment, p.CPUScale, calibrated, 1e9*p.Total.CPUSeconds/float64(max(1, p.Total.Edges)), p.EdgeGrowth,
		p.Prices.Source, p.VCPUHour, p.Total.TotalUSD, p.Total.StorageUSDPerMonth,
		100*l.Headroom, l.AccountRequests, l.AccountIngress*8/1e9, l.AccountEgress*8/1e9, l.QueueMessages, l.PartitionEntities, queues, partitions, strings.Join(p.Fitted, "; "))
	return err
}

// bytesText is n in decimal units, for people.
func bytesText(n int64) string {
	switch {
	case n >= 1e12:
		return fmt.Sprintf("%.2f TB", float64(n)/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

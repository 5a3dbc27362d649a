package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
)

const seedIntro = `
seed creates a run's queues, containers and tables and enqueues the start
position. Seeding again with the same configuration changes nothing; a
different configuration for an existing run is refused.

-start "SQUARES SIDE" seeds the run from any position (its board follows
from the squares; -plies counts from it); -solve makes the workers solve
every position of the target ply exactly, so that the run ends with the
start position's exact score.

seed -delete deletes a run instead: its queues, blob container and tables,
on every account. It refuses a run that is not complete unless -force is
given too.

Usage: seed -run NAME [-board 4|6|8 | -start "SQUARES SIDE"] [-plies N] [-solve]
       seed -run NAME -delete [-force]`

// Seed is cmd/seed.
func Seed(env Env) int { return finish("seed", env, seed(env)) }

func seed(env Env) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	run := fs.String("run", "", "run name: 3-32 lowercase letters and digits, starting with a letter (required)")
	fleet := fs.Int("fleet", 1, "the most worker loops that will work on the run at once (processes times -concurrency): the capacity plan (enumerate -plan) sizes the queue and partition shards for them when -queue-shards and -partition-shards are left out")
	del := fs.Bool("delete", false, "delete the run instead of seeding it: its work, compensation and poison queues, its blob container and its tables, on every account; a run that is not complete only with -force")
	force := fs.Bool("force", false, "with -delete: delete the run even if it is not complete (its workers then fail)")
	var stf settingsFlags
	stf.register(fs, "")
	var sf storageFlags
	sf.register(fs, "azure")
	if help, err := parse(fs, env, seedIntro); help || err != nil {
		return err
	}
	if err := requireRun(*run); err != nil {
		return err
	}
	if *del {
		return deleteRun(env, fs, &sf, *run, *force)
	}
	if *force {
		return usagef("-force is for -delete")
	}
	cfg, err := stf.config(fs, *run)
	if err != nil {
		return err
	}
	if *fleet < 1 {
		return usagef("-fleet %d: must be 1 or more", *fleet)
	}
	if err := planShards(fs, &cfg, *fleet); err != nil {
		return err
	}
	if err := sf.validate(true); err != nil {
		return err
	}
	ctx := context.Background()
	be, err := sf.open(ctx, env, "")
	if err != nil {
		return err
	}
	defer be.Close()
	cfg = cfg.OnAccounts(sf.accounts)
	if _, err := pipeline.Seed(ctx, be, cfg); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "run %s seeded: board %dx%d, target ply %d; %s\n", cfg.Name, cfg.Board, cfg.Board, cfg.Target, workQueues(cfg))
	return nil
}

// deleteRun is seed -delete: it drops the run's queues, container and
// tables (pipeline.Run.Drop), once it is complete or with force. A
// delete cut short can be made again: the run's configuration goes last.
func deleteRun(env Env, fs *flag.FlagSet, sf *storageFlags, name string, force bool) error {
	var other string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "run", "delete", "force", "storage", "data":
		default:
			other = cmp.Or(other, f.Name)
		}
	})
	if other != "" {
		return usagef("-delete takes -run, -force and the storage flags; leave out -%s", other)
	}
	if err := sf.validate(true); err != nil {
		return err
	}
	ctx := context.Background()
	be, r, err := sf.openRun(ctx, env, name)
	if err != nil {
		return err
	}
	defer be.Close()
	if !force {
		done, err := r.Done(ctx)
		if err != nil {
			return err
		}
		if done == nil {
			return fmt.Errorf("run %s is not complete; add -force to delete it anyway (workers still on it then fail)", name)
		}
	}
	if err := r.Drop(ctx); err != nil {
		return err
	}
	state, back := r.Config.TableNames()
	fmt.Fprintf(env.Stdout, "run %s deleted: %s, %d compensation queues, the poison queue, blob container %s and %d tables\n",
		name, workQueues(r.Config), len(r.Config.CompensationQueueNames()), pipeline.Container(name), len(state)+len(back))
	return nil
}

// workQueues names a run's work queues for seed's output, with the
// account of each when there are several (numbered from 1 as the
// environment's connection strings are), so that an autoscaler can be
// given one trigger per queue.
func workQueues(cfg pipeline.RunConfig) string {
	names := pipeline.WorkQueues(cfg.Name, cfg.QueueShards)
	if cfg.Accounts > 1 {
		for i, name := range names {
			names[i] = fmt.Sprintf("%s (account %d)", name, i%cfg.Accounts+1)
		}
	}
	if len(names) == 1 {
		return "work queue " + names[0]
	}
	return "work queues " + strings.Join(names, ", ")
}

// requireRun checks the -run flag that worker and inspect need.
func requireRun(run string) error {
	if run == "" {
		return usagef("-run is required")
	}
	if err := pipeline.ValidRunName(run); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

const workerIntro = `
worker pulls a run's messages from its work queue and handles them:
expansion (A and C), merges, ply transitions, results and compensation.
Run as many as you like, on any machines that reach the storage account.
SIGINT or SIGTERM abandons the current message cleanly (it is made visible
again at once for another worker; with -finish-within, the worker first
finishes it, taking no other) and exits 0; a second one exits at once
with status 130. -metrics-addr serves Prometheus metrics
(reversi_*: messages, task durations, positions, storage transactions and
bytes) at /metrics while the worker runs. Logs are JSON by default; every
line about a message carries run, worker, msg_id, kind and ply.

Usage: worker -run NAME [flags]`

// Worker is cmd/worker.
func Worker(env Env) int { return finish("worker", env, worker(env)) }

// workerFlags are worker's flags.
type workerFlags struct {
	run         string
	concurrency int
	id          string
	metricsAddr string
	// visibility, compDelay, maxDequeue, exitWhenDone and the throttle
	// settings are the worker loops' pipeline.WorkerConfig.
	visibility, compDelay time.Duration
	maxDequeue            int64
	exitWhenDone          bool
	throttleRetries       int
	throttleDelay         time.Duration
	// finishWithin is how long a stopped worker may take to finish the
	// messages under way; see worker.
	finishWithin time.Duration
	storage      storageFlags
	log          logFlags
	profile      profileFlags
}

func (f *workerFlags) register(fs *flag.FlagSet) {
	d := pipeline.DefaultWorkerConfig()
	fs.StringVar(&f.run, "run", "", "run name (required)")
	fs.IntVar(&f.concurrency, "concurrency", 1, "messages handled at once (the article warns against several CPU-heavy messages on one machine)")
	fs.DurationVar(&f.visibility, "visibility", d.Visibility, "queue visibility timeout; long tasks extend it")
	fs.DurationVar(&f.compDelay, "compensation-delay", 0, "initial delay of compensation messages (default 4x -visibility)")
	fs.Int64Var(&f.maxDequeue, "max-dequeue", d.MaxDequeue, "move a message to the poison queue after this many deliveries")
	fs.IntVar(&f.throttleRetries, "throttle-retries", d.ThrottleRetries, "run a task that storage throttled (503, 429) again this many times, under its lease, before giving its message back (0: give it back at once)")
	fs.DurationVar(&f.throttleDelay, "throttle-delay", d.ThrottleDelay, "wait this long before the first rerun of a throttled task, twice as long before each next")
	fs.BoolVar(&f.exitWhenDone, "exit-when-done", false, "exit 0 once the run is complete and its work and compensation queues empty (delayed compensation messages of failed tasks handled)")
	fs.DurationVar(&f.finishWithin, "finish-within", 0, "on SIGINT or SIGTERM, take no more messages and finish those under way for up to this long before giving them back (0: give them back at once); a deployment's scale-in then stops no task half-done, given a grace period longer than this")
	fs.StringVar(&f.id, "id", "", "worker id in logs and statistics (default: host name and process id)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", metricsAddrHelp)
	f.storage.register(fs, "azure")
	f.log.register(fs, "json")
	f.profile.register(fs)
}

// workerConfig checks the flags and returns the worker loops'
// configuration; a left-out -id becomes the host name and process id.
func (f *workerFlags) workerConfig(fs *flag.FlagSet) (pipeline.WorkerConfig, error) {
	if err := requireRun(f.run); err != nil {
		return pipeline.WorkerConfig{}, err
	}
	if f.concurrency < 1 || f.concurrency > 64 {
		return pipeline.WorkerConfig{}, usagef("-concurrency %d: must be 1 to 64", f.concurrency)
	}
	// A zero -compensation-delay means its default, as
	// the help says; the other durations and counts must be given.
	if err := positive(fs, "visibility", "max-dequeue", "throttle-delay"); err != nil {
		return pipeline.WorkerConfig{}, err
	}
	if f.throttleRetries < 0 || f.throttleRetries > pipeline.MaxThrottleRetries {
		return pipeline.WorkerConfig{}, usagef("-throttle-retries %d: must be 0 to %d", f.throttleRetries, pipeline.MaxThrottleRetries)
	}
	if f.throttleDelay > pipeline.MaxThrottleDelay {
		return pipeline.WorkerConfig{}, usagef("-throttle-delay %v: must be at most %v", f.throttleDelay, pipeline.MaxThrottleDelay)
	}
	retries := f.throttleRetries
	if retries == 0 {
		retries = pipeline.NoThrottleRetries // where the configuration's zero is the default
	}
	if f.finishWithin < 0 {
		return pipeline.WorkerConfig{}, usagef("-finish-within %v: must be zero or more", f.finishWithin)
	}
	if f.id == "" {
		host, _ := os.Hostname()
		f.id = fmt.Sprintf("%s-%d", strings.ToLower(host), os.Getpid())
	}
	wcfg := pipeline.WorkerConfig{Visibility: f.visibility, CompensationDelay: f.compDelay, MaxDequeue: f.maxDequeue, ExitWhenDone: f.exitWhenDone, Drain: true,
		ThrottleRetries: retries, ThrottleDelay: f.throttleDelay}.WithDefaults()
	if err := wcfg.Validate(); err != nil {
		return pipeline.WorkerConfig{}, usageError{err.Error()}
	}
	if err := f.storage.validate(true); err != nil {
		return pipeline.WorkerConfig{}, err
	}
	return wcfg, checkMetricsAddr(f.metricsAddr)
}

func worker(env Env) (err error) {
	tuneGC(env, pipeline.WorkerGC)
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var f workerFlags
	f.register(fs)
	if help, err := parse(fs, env, workerIntro); help || err != nil {
		return err
	}
	wcfg, err := f.workerConfig(fs)
	if err != nil {
		return err
	}
	log, err := f.log.logger(env.Stderr)
	if err != nil {
		return err
	}
	stopProfile, err := f.profile.start()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	// Set before open: the backend reports a full disk to it.
	base, full := f.storage.stopWhenFull(context.Background())
	// The first signal cancels ctx, which stops the loops taking messages
	// (and the start-up below); the messages under way are abandoned when
	// hard is done, -finish-within later or on a full disk.
	ctx, hard, stop := stoppable(base, env, "worker", "interrupted again: exiting at once; the messages it held reappear after their visibility timeout", f.finishWithin)
	defer stop()
	be, err := f.storage.open(ctx, env, f.run)
	if err != nil {
		return err
	}
	defer be.Close()
	progress := &pipeline.Progress{}
	observer, stopMetrics, err := startMetrics(f.metricsAddr, be, progress, log.With("worker", f.id, "run", f.run))
	if err != nil {
		return err
	}
	defer stopMetrics()
	wcfg.Observer = observer
	r, err := f.storage.findRun(ctx, be, f.run)
	if err != nil {
		return err
	}
	// The worker loops add the run to their lines themselves.
	loopLog := log.With("worker", f.id)
	log = loopLog.With("run", f.run)
	log.Info("worker started", "board", r.Config.Board, "target_ply", r.Config.Target, "concurrency", f.concurrency)
	stopRecording := recordStatsEvery(be, f.run, f.id, statsPeriod, log)
	if err := runLoops(hard, ctx, r, wcfg, loopLog, progress, f.concurrency); err != nil {
		return err
	}
	stopRecording()
	if err := full(); err != nil {
		return fmt.Errorf("%w; free some space, then start the worker again", err)
	}
	storeStats(r, be, f.id, log)
	log.Info("worker stopped")
	return nil
}

// runLoops runs n worker loops on r until they stop: ctx is done (they
// abandon the messages under way), stopping is (they finish those
// first: pipeline.Worker.Stop), or the run is (with ExitWhenDone). If a
// loop cannot be made, it returns at once: the loops already started
// stop when the caller cancels ctx.
func runLoops(ctx, stopping context.Context, r *pipeline.Run, wcfg pipeline.WorkerConfig, log *slog.Logger, progress *pipeline.Progress, n int) error {
	var wg sync.WaitGroup
	for range n {
		w, err := pipeline.NewWorker(r, wcfg, log, progress)
		if err != nil {
			return err
		}
		context.AfterFunc(stopping, w.Stop)
		wg.Go(func() { w.Run(ctx) })
	}
	wg.Wait()
	return nil
}

const inspectIntro = `
inspect reads a run's tables and prints its per-ply table (or -json), with
the storage transactions every worker recorded, by service and category,
and their estimated cost (prices: the -price-* flags). While the run is in
progress it shows how far it has got (complete: false). With -check it
audits the run instead: one line per problem (orphaned or missing blobs,
overlapping runs in a complete ply, poison messages, work left in a
complete run) and a summary; exit status 1 if any problem is an error.

With -position KEY or -moves LIST it shows one position instead: a board
diagram, its canonical key, ply and result (with the perfect-play score
where the run reached the end of the game), the moves that keep that
result, its parents from the backtracking rows, and its children with
their results.

With -http ADDR it serves the run to a web browser instead, until Ctrl-C:
the per-ply table and charts, a board viewer from the start position
whose moves lead to the children (every position has its own address),
and the JSON endpoints behind them: /api/report, /api/position?moves=
or ?key=, /api/progress. An incomplete run's table refreshes by itself.

Usage: inspect -run NAME [-json FILE | -check | -http ADDR]
       inspect -run NAME -position KEY | -moves f5d6c3 [-json FILE]`

// Inspect is cmd/inspect.
func Inspect(env Env) int { return finish("inspect", env, inspect(env)) }

func inspect(env Env) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	run := fs.String("run", "", "run name (required)")
	jsonOut := fs.String("json", "", "write the report (or the position) as JSON to this file")
	doCheck := fs.Bool("check", false, "audit the run instead: one line per problem found, exit 1 if any")
	var sf storageFlags
	sf.register(fs, "azure")
	var pf positionFlags
	pf.register(fs)
	var cf costFlags
	cf.register(fs)
	var hf httpFlag
	hf.register(fs, "until Ctrl-C")
	if help, err := parse(fs, env, inspectIntro); help || err != nil {
		return err
	}
	if err := cf.validate(fs); err != nil {
		return err
	}
	if err := requireRun(*run); err != nil {
		return err
	}
	if err := pf.validate(); err != nil {
		return err
	}
	if *doCheck && pf.set() {
		return usagef("-check audits the whole run; leave out -position and -moves")
	}
	if err := hf.validate(); err != nil {
		return err
	}
	if hf.set() && (*doCheck || pf.set() || *jsonOut != "") {
		return usagef("-http serves the whole run; leave out -check, -position, -moves and -json")
	}
	if err := sf.validate(true); err != nil {
		return err
	}
	ctx := context.Background()
	be, r, err := sf.openRun(ctx, env, *run)
	if err != nil {
		return err
	}
	defer be.Close()
	if *doCheck {
		return check(ctx, env.Stdout, r)
	}
	if pf.set() {
		return pf.show(ctx, env, r, *jsonOut)
	}
	src := &runSource{be: be, name: *run, cf: &cf, run: r}
	if hf.set() {
		return browseRun(env, hf, src, message.Origin{Board: r.Board, Start: r.Config.Start})
	}
	rep, err := src.Report(ctx)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(env.Stdout); err != nil {
		return err
	}
	if *jsonOut != "" {
		return rep.WriteJSONFile(*jsonOut)
	}
	return nil
}

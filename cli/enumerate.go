package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/browse"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

const enumerateIntro = `
enumerate counts the canonical Reversi positions ply by ply and works out
who wins from each, then prints a per-ply table (and -json writes it).

By default it runs the distributed pipeline in this process: it seeds a
run, starts -workers worker loops (the same code as cmd/worker) on the
embedded storage backend, and reports. -storage azure runs the same
pipeline on Azure Storage or Azurite; -engine reference runs the simple
in-memory enumerator that the pipeline is checked against.

-position KEY or -moves LIST (e.g. -board 4 -moves b1) then shows one
position of the finished run, as inspect does: its result, the moves that
keep it, its parents and its children.

-start "SQUARES SIDE" enumerates from any position instead of the usual
start (the squares a1 b1 ... row by row, X, O or -, then X or O to move,
as cmd/solve reads them; -plies counts from it), and -solve solves every
position of the target ply exactly, so the report ends with root_score,
the start position's score under perfect play (black minus white, empty
squares to the winner). For example, FFO endgame #45, solved 3 plies in:

  go run ./cmd/enumerate -plies 3 -solve -start "---XXXX-X-XXXO--XXOXOO--XXXOXO--XXOXXO---OXXXOO-O-OOOO------OO-- X"

-solve-mode root solves each position of the target ply only as far as
its parents need for the start's exact score (a bound where a sibling
already does better, nothing once its parents are settled), at a cost
nearer one solver's; -solve-mode wld only as far as the start's win, draw
or loss needs. Both report which positions were solved, bounded and
skipped.

-plan runs nothing: it prints what a run through -plies would take, ply
by ply (storage transactions, bytes, cost, CPU, and the accounts, queue
shards and table partitions it needs), from a model fitted to measured
runs; -deadline D plans the workers that finish within D.

-http ADDR serves the run to a web browser while it goes on (live
progress, the per-ply table and charts, a board viewer), and after it
ends until Ctrl-C; inspect -http explains the page.

Usage: go run ./cmd/enumerate [flags]`

// Enumerate is cmd/enumerate.
func Enumerate(env Env) int { return finish("enumerate", env, enumerate(env)) }

// enumerateFlags are enumerate's flags.
type enumerateFlags struct {
	engine     string
	jsonOut    string
	workers    int
	run        string
	verify     bool
	visibility time.Duration
	quiet      bool
	settings   settingsFlags
	storage    storageFlags
	log        logFlags
	position   positionFlags
	cost       costFlags
	http       httpFlag
	plan       planFlags
	profile    profileFlags
}

func (f *enumerateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.engine, "engine", "pipeline", "engine: pipeline (distributed workers over storage) or reference (single process, in memory)")
	fs.StringVar(&f.jsonOut, "json", "", "write the report as JSON to this file")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "pipeline: worker loops in this process")
	fs.StringVar(&f.run, "run", "", "pipeline: run name, 3-32 lowercase letters and digits (default: "+dataRun+" with -data, so that the same command continues the run; else a fresh name)")
	fs.BoolVar(&f.verify, "verify", false, "pipeline: also run the reference engine and exit 1 on any difference")
	fs.DurationVar(&f.visibility, "visibility", pipeline.DefaultWorkerConfig().Visibility, "pipeline: queue visibility timeout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on standard error")
	f.settings.register(fs, "pipeline: ")
	f.storage.registerSim(fs, "embedded")
	f.log.register(fs, "text")
	f.log.level = "warn"
	f.position.register(fs)
	f.cost.register(fs)
	f.http.register(fs, "during the run and after it until Ctrl-C (pipeline engine)")
	f.plan.register(fs)
	f.profile.register(fs)
}

func enumerate(env Env) (err error) {
	tuneGC(env, pipeline.WorkerGC)
	fs := flag.NewFlagSet("enumerate", flag.ContinueOnError)
	var f enumerateFlags
	f.register(fs)
	if help, err := parse(fs, env, enumerateIntro); help || err != nil {
		return err
	}
	cfg, err := f.runConfig(fs)
	if err != nil {
		return err
	}
	if err := writableFile("json", f.jsonOut); err != nil {
		return err
	}
	// -plan runs nothing, so the flags that only a run reads are not
	// checked for it.
	if f.plan.on {
		return f.plan.plan(env, cfg, f.workers, f.jsonOut, &f.cost, f.quiet)
	}
	if err := f.checkRun(fs, &cfg); err != nil {
		return err
	}
	if f.storage.kind == "sim" {
		tuneGC(env, simGC(f.storage.sim.WithDefaults().MemoryBytes))
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
	start := time.Now()
	if f.engine == "reference" {
		res, err := reference.Enumerate(board.MustNew(cfg.Board), cfg.Target)
		if err != nil {
			return err
		}
		return f.writeReport(env, res.Report, start)
	}
	return f.enumeratePipeline(env, fs, cfg, log, start)
}

// runConfig checks the flags that -plan reads too and returns the run's
// configuration, under a fresh name when -run is left out.
func (f *enumerateFlags) runConfig(fs *flag.FlagSet) (pipeline.RunConfig, error) {
	if err := f.http.validate(); err != nil {
		return pipeline.RunConfig{}, err
	}
	if err := f.cost.validate(fs); err != nil {
		return pipeline.RunConfig{}, err
	}
	if err := f.plan.validate(fs); err != nil {
		return pipeline.RunConfig{}, err
	}
	name := f.run
	switch {
	case name != "":
	case f.storage.data != "":
		// The same command continues the run, however the last
		// process ended (a kill -9 prints no name to continue with).
		name = dataRun
	default:
		name = fmt.Sprintf("enum%d", time.Now().UnixNano()%1e12)
	}
	return f.settings.config(fs, name)
}

// dataRun is the run of enumerate -data DIR without -run.
const dataRun = "run"

// checkRun checks the flags of a run, and how they combine with the
// engine, and sizes cfg's shards for -workers.
func (f *enumerateFlags) checkRun(fs *flag.FlagSet, cfg *pipeline.RunConfig) error {
	if err := f.position.validate(); err != nil {
		return err
	}
	startOrSolve := f.settings.start != "" || f.settings.solve
	switch {
	case f.position.set() && f.engine != "pipeline":
		return usagef("-position and -moves read the pipeline's stored results; leave out -engine reference")
	case f.engine == "reference" && startOrSolve:
		return usagef("-start and -solve need the pipeline; leave out -engine reference")
	case f.verify && startOrSolve:
		return usagef("-verify compares with the reference engine, which knows neither -start nor -solve")
	case f.engine != "pipeline" && f.engine != "reference":
		return usagef("-engine %q: must be pipeline or reference", f.engine)
	case f.workers < 1 || f.workers > 1024:
		return usagef("-workers %d: must be 1 to 1024", f.workers)
	}
	if err := planShards(fs, cfg, f.workers); err != nil {
		return err
	}
	if err := positive(fs, "visibility"); err != nil {
		return err
	}
	if f.http.set() && f.engine != "pipeline" {
		return usagef("-http serves the pipeline's stored run; leave out -engine reference")
	}
	return f.storage.validate(false)
}

// enumeratePipeline runs the pipeline in this process on the storage
// the flags name, continuing the run if it exists, then reports it: the
// table, -json, -position, -verify, and -http until Ctrl-C.
func (f *enumerateFlags) enumeratePipeline(env Env, fs *flag.FlagSet, cfg pipeline.RunConfig, log *slog.Logger, start time.Time) error {
	// A sim run drains: its workers stay until the delayed compensation
	// messages of the tasks that storage throttled into a rerun have
	// surfaced and been handled, so that its audit, once it is gone,
	// finds no work in flight.
	wcfg := pipeline.WorkerConfig{Visibility: f.visibility, Drain: f.storage.kind == "sim"}
	if err := wcfg.WithDefaults().Validate(); err != nil {
		return usageError{err.Error()}
	}
	// A new directory holds no run whose settings could win: its disk is
	// checked before opening the store creates it; any other, once the
	// run's recorded settings are known.
	_, statErr := os.Stat(f.storage.data)
	fresh := f.storage.data != "" && errors.Is(statErr, os.ErrNotExist)
	if fresh {
		if err := checkDisk(f.storage, cfg); err != nil {
			return err
		}
	}
	// Set before open: the backend reports a full disk to it.
	ctx, full := f.storage.stopWhenFull(context.Background())
	be, err := f.storage.open(ctx, env, "")
	if err != nil {
		return err
	}
	defer be.Close()
	if f.storage.kind == "sim" {
		defer func() { fmt.Fprintf(env.Stderr, "enumerate: %s\n", f.storage.simSummary()) }()
	}
	// The run may be an existing one, whose settings win.
	if cfg, err = resumeConfig(ctx, fs, be, &f.storage, cfg); err != nil {
		return err
	}
	if !fresh {
		if err := checkDisk(f.storage, cfg); err != nil {
			return err
		}
	}
	// From here on a signal stops the run cleanly; before, it ends the
	// process, which has started nothing.
	again := "interrupted again: exiting at once; " + f.storage.resume(cfg)
	ctx, stop := interruptible(ctx, env, "enumerate", again)
	defer stop()
	// Check the position now rather than after a long run.
	if f.position.set() {
		if _, err := f.position.position(board.MustNew(cfg.Board), cfg.Start); err != nil {
			return err
		}
	}
	progress := &pipeline.Progress{}
	web, err := f.startWeb(ctx, env, be, cfg, progress, start)
	if err != nil {
		return err
	}
	if web != nil {
		defer web.stop()
	}
	stopProgress := func() {}
	if !f.quiet {
		stopProgress = sync.OnceFunc(showProgress(env, progress, start))
		defer stopProgress()
	}
	rep, r, err := f.runLocal(ctx, be, cfg, wcfg, log, progress, start, web, full)
	if err != nil {
		return err
	}
	if f.storage.kind == "azure" || f.storage.data != "" {
		leftovers(ctx, env, r, &f.storage, wcfg.WithDefaults().CompensationDelay)
	}
	if f.storage.kind == "sim" {
		// A rehearsal checks what it rehearsed: the run is gone once
		// this process ends, so nothing could check it later. The check
		// is no part of the fleet, and reads the account directly.
		stopProgress()
		if !f.quiet {
			fmt.Fprintln(env.Stderr, "auditing the rehearsed run (the checks of inspect -check)")
		}
		audited, err := pipeline.OpenRun(ctx, f.storage.simBE.Inner(), cfg.Name)
		if err != nil {
			return fmt.Errorf("auditing run %s: %w", cfg.Name, err)
		}
		a, err := audited.Audit(ctx)
		if err != nil {
			return fmt.Errorf("auditing run %s: %w", cfg.Name, err)
		}
		rep.Audit = a.Report()
	}
	if err := f.show(ctx, env, r, rep, start, web); err != nil {
		return err
	}
	if rep.Audit != nil && len(rep.Audit.Problems) > 0 {
		return fmt.Errorf("the audit at the end of run %s found %d problems (the report's audit lists them), the first: %s",
			cfg.Name, len(rep.Audit.Problems), rep.Audit.Problems[0])
	}
	return nil
}

// show reports a finished run: the table and -json, then -position,
// -verify, and -http until Ctrl-C.
func (f *enumerateFlags) show(ctx context.Context, env Env, r *pipeline.Run, rep *report.Report, start time.Time, web *browser) error {
	if err := f.writeReport(env, rep, start); err != nil {
		return err
	}
	if f.position.set() {
		fmt.Fprintln(env.Stdout)
		if err := f.position.show(ctx, env, r, ""); err != nil {
			return err
		}
	}
	if f.verify {
		if err := verify(env, r.Board, r.Config.Target, rep); err != nil {
			return err
		}
	}
	if web != nil {
		fmt.Fprintf(env.Stderr, "enumerate: the run is over; still serving it at %s until Ctrl-C\n", web.url)
		return web.serveUntil(ctx)
	}
	return nil
}

// startWeb serves the run to a browser while it goes on, for -http; it
// returns nil without -http.
func (f *enumerateFlags) startWeb(ctx context.Context, env Env, be *storage.Metered, cfg pipeline.RunConfig, progress *pipeline.Progress, start time.Time) (*browser, error) {
	if !f.http.set() {
		return nil, nil
	}
	src := &runSource{be: be, name: cfg.Name, cf: &f.cost}
	origin := message.Origin{Board: board.MustNew(cfg.Board), Start: cfg.Start}
	web, err := startBrowser(ctx, f.http, src, browse.Config{Origin: origin, Progress: progress, Started: start})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Stderr, "enumerate: browse the run at %s\n", web.url)
	return web, nil
}

// runLocal runs the pipeline's workers on the run until it is complete
// or ctx is done, and returns its report, with the costs of the
// transactions, and the open run. It records this process's
// transactions in the run as it goes and at the end, even when
// interrupted, so that inspect and an enumerate continuing the run (same
// -run and -data) count every process's share, a killed one's up to its
// last period. web, if not nil, learns that the run is over. A full disk
// (full, from stopWhenFull) or an interruption is an error that says how
// to resume.
func (f *enumerateFlags) runLocal(ctx context.Context, be *storage.Metered, cfg pipeline.RunConfig, wcfg pipeline.WorkerConfig,
	log *slog.Logger, progress *pipeline.Progress, start time.Time, web *browser, full func() error) (*report.Report, *pipeline.Run, error) {
	id := fmt.Sprintf("enumerate-%d", start.UnixNano())
	stopRecording := recordStatsEvery(be, cfg.Name, id, statsPeriod, log)
	rep, err := pipeline.RunLocal(ctx, be, cfg, f.workers, wcfg, log, progress)
	stopRecording()
	r, stats, rerr := recordStats(be, cfg.Name, id)
	if web != nil {
		web.finish()
	}
	if err := full(); err != nil {
		return nil, nil, fmt.Errorf("%w; free some space, then %s", err, f.storage.resume(cfg))
	}
	if err != nil && ctx.Err() != nil {
		return nil, nil, interruptedError{interruption(r, progress) + "; " + f.storage.resume(cfg)}
	}
	if err != nil {
		return nil, r, err
	}
	if rerr != nil {
		return nil, r, rerr
	}
	return rep, r, f.cost.apply(ctx, rep, be, cfg.Name, stats)
}

// writeReport prints the per-ply table and writes -json.
func (f *enumerateFlags) writeReport(env Env, rep *report.Report, start time.Time) error {
	rep.WallSeconds = time.Since(start).Seconds()
	if err := rep.WriteTable(env.Stdout); err != nil {
		return err
	}
	if f.jsonOut != "" {
		return rep.WriteJSONFile(f.jsonOut)
	}
	return nil
}

// verify compares the pipeline's report with the reference engine's, for
// -verify.
func verify(env Env, b *board.Board, target int, rep *report.Report) error {
	ref, err := reference.Enumerate(b, target)
	if err != nil {
		return err
	}
	if diff := Compare(ref.Report, rep); diff != "" {
		return fmt.Errorf("verify: the pipeline differs from the reference engine: %s", diff)
	}
	fmt.Fprintln(env.Stdout, "verify: the pipeline matches the reference engine on every ply")
	return nil
}

// recordStats stores be's transactions and this process's compute under
// id in the run and returns the open run and their totals over every
// process that recorded.
func recordStats(be *storage.Metered, run, id string) (*pipeline.Run, runstore.WorkerStats, error) {
	// A fresh context: the run's may be cancelled already.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := pipeline.OpenRun(ctx, be, run)
	if err != nil {
		return nil, runstore.WorkerStats{}, err
	}
	if err := r.RecordStats(ctx, id, processStats(be)); err != nil {
		return nil, runstore.WorkerStats{}, err
	}
	stats, err := r.RecordedStats(ctx)
	return r, stats, err
}

// Compare describes the first differences between two reports' per-ply
// counts and results, or returns "".
func Compare(want, got *report.Report) string { return report.Diff(want, got) }

// byCategory is Stats.ByCategory with uncategorised calls named "other".
func byCategory(s storage.Stats) map[string]int64 {
	m := s.ByCategory()
	if n, ok := m[""]; ok {
		delete(m, "")
		m["other"] += n
	}
	return m
}

// showProgress shows how far the run is on standard error, as a
// progressOutput, until the function it returns is called.
func showProgress(env Env, p *pipeline.Progress, start time.Time) func() {
	out := &progressOutput{w: env.Stderr, terminal: env.StderrTerminal}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				el := time.Since(start)
				out.status(progressLine(p, el), stepOf(p), el)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		out.end()
	}
}

// A progressOutput writes status lines, given every second. On a
// terminal it rewrites one line in place each time. In a file or a pipe,
// where every line stays, it writes one when a step starts and then
// every progressEvery: a log keeps the run's history, readable line by
// line, instead of one line holding every second's state.
type progressOutput struct {
	w        io.Writer
	terminal bool
	step     string        // the step of the last line written
	at       time.Duration // and when it was written
}

// progressEvery is how often a file or a pipe gets a line within a
// step: a run to 8x8 ply 14 then logs some 200 lines.
const progressEvery = 10 * time.Second

// status shows line, a status line of step at elapsed.
func (o *progressOutput) status(line, step string, elapsed time.Duration) {
	if o.terminal {
		fmt.Fprintf(o.w, "\r%s ", line)
		return
	}
	if step == o.step && elapsed-o.at < progressEvery {
		return
	}
	o.step, o.at = step, elapsed
	fmt.Fprintln(o.w, line)
}

// end follows the last status line.
func (o *progressOutput) end() {
	if o.terminal {
		fmt.Fprintln(o.w)
	}
}

// stepOf names the step the run is in, without its counts: the ply and
// the step's name, or what the latest task was doing before the first
// status reading.
func stepOf(p *pipeline.Progress) string {
	if s, ok := p.Step(); ok {
		return fmt.Sprintf("ply %d: %s", s.Ply, s.Name)
	}
	return p.Current()
}

// progressLine says how far the run is, for a person: the time, the
// step under way with its items done out of the total and the time it
// should take yet, and this process's throughput.
func progressLine(p *pipeline.Progress, elapsed time.Duration) string {
	el := elapsed.Seconds()
	where := p.Current()
	if s, ok := p.Step(); ok {
		where = s.String()
		if left, ok := p.ETA(); ok {
			where += fmt.Sprintf(", about %s left in this step", left.Round(time.Second))
		}
	}
	return fmt.Sprintf("%6.1fs  %s  tasks %d  edges %d  %.0f edges/s", el, where, p.Tasks.Load(), p.Edges.Load(), float64(p.Edges.Load())/max(el, 1e-9))
}

// resumeConfig returns the configuration of the run the flags name: cfg
// for a new run; for an existing one, its recorded configuration, which
// the flags given must not change (those left out take its values).
func resumeConfig(ctx context.Context, fs *flag.FlagSet, be storage.Backend, sf *storageFlags, cfg pipeline.RunConfig) (pipeline.RunConfig, error) {
	r, err := pipeline.OpenRun(ctx, be, cfg.Name)
	if errors.Is(err, pipeline.ErrNoRun) {
		return cfg.OnAccounts(sf.accounts), nil
	}
	if err != nil {
		return cfg, err
	}
	have := r.Config
	if err := sf.sameAccounts(have); err != nil {
		return cfg, err
	}
	for _, s := range runSettings {
		if given(fs, s.flag) && s.value(cfg) != s.value(have) {
			return cfg, usagef("%s would change run %s %s, started with %s; leave -%s out to continue it, or pick another -run",
				flagText(fs, s.flag), cfg.Name, sf.where(), runFlags(have), s.flag)
		}
	}
	return have, nil
}

// interruption says how far an interrupted run got: the plies complete
// in storage (r is nil if the run could not be read) and this process's
// tasks.
func interruption(r *pipeline.Run, p *pipeline.Progress) string {
	tasks := fmt.Sprintf("%d tasks done by this process", p.Tasks.Load())
	if r == nil {
		return "interrupted before the run was stored; " + tasks
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := r.Report(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("interrupted (reading how far the run got: %v); %s", err, tasks)
	case len(rep.Plies) == 0:
		return "interrupted before ply 0 was complete; " + tasks
	}
	last := rep.Plies[len(rep.Plies)-1]
	if last.Ply < rep.TargetPly {
		return fmt.Sprintf("interrupted at ply %d of %d: plies 0-%d complete (%d positions at ply %d); %s",
			last.Ply+1, rep.TargetPly, last.Ply, last.Positions, last.Ply, tasks)
	}
	return fmt.Sprintf("interrupted while working out results: plies 0-%d complete (%d positions at ply %d); %s",
		last.Ply, last.Positions, last.Ply, tasks)
}

// leftovers says when a complete run's work queue still holds messages:
// the delayed compensation messages of tasks that an earlier process
// (killed or interrupted) left unfinished. They surface within delay and
// delete the blobs those tasks orphaned; until then inspect -check
// reports them, so the user learns what to run.
func leftovers(ctx context.Context, env Env, r *pipeline.Run, sf *storageFlags, delay time.Duration) {
	n, err := r.Queued(ctx)
	if err != nil || n == 0 {
		return
	}
	where := "-storage azure"
	if sf.kind == "embedded" {
		where = "-data " + shellQuote(sf.data)
	}
	fmt.Fprintf(env.Stderr, "enumerate: %d delayed compensation messages of unfinished tasks are left; within %s they remove the blobs those tasks orphaned, which inspect -check reports until then: worker %s -run %s -exit-when-done waits for them and handles them, or run this command again after that\n",
		n, delay, where, r.Config.Name)
}

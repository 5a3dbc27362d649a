package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// faultWorker is the worker configuration of the fault sweeps. Time never
// decides anything: the visibility timeout is far longer than any task, so
// no heartbeat fires and the calls of one worker come in the same order on
// every run; the reappearance of abandoned messages and the end of
// compensation delays are brought forward by the faulty wrapper instead.
func faultWorker(id string) WorkerConfig {
	return WorkerConfig{Visibility: 10 * time.Minute, CompensationDelay: 40 * time.Minute, MaxDequeue: 5,
		PollMin: time.Millisecond, PollMax: 5 * time.Millisecond, ExitWhenDone: true}
}

// faultOutcome is what one run with one planned fault did.
type faultOutcome struct {
	calls int64  // calls of the first worker
	fired string // the call the fault struck
	err   error  // nil if the run converged exactly and left nothing behind
}

// runWithFault runs cfg on a fresh embedded backend with the fault planned
// at one call of the first worker (which also seeds, as cmd/seed would).
// After a crash the dead worker's messages reappear and a fresh worker
// finishes the run; after a transient failure the same worker carries on.
// Once the run is done and no worker is alive, delayed compensation
// messages surface and a last worker handles them. The outcome's err says
// what, if anything, check finds wrong with the finished run.
func runWithFault(t *testing.T, cfg RunConfig, check func(context.Context, storage.Backend) error, plan faulty.Config) (out faultOutcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	plan.ReleaseAbandoned = true
	a := faulty.New(inner, plan)
	defer func() { out.calls, out.fired = a.Calls(), a.Fired() }()

	seeded := false
	work := func(be *faulty.Backend, id string) (err error) {
		seeded, err = faultWork(ctx, t, be, cfg, seeded, id)
		return err
	}
	if err := work(a, "a"); err != nil {
		out.err = err
		return
	}
	if a.IsCrashed() {
		if err := a.ReleaseHeld(ctx); err != nil {
			t.Fatal(err)
		}
		b := faulty.New(inner, faulty.Config{ReleaseAbandoned: true})
		if err := work(b, "b"); err != nil {
			out.err = err
			return
		}
		if err := b.SurfaceDelayed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ctx.Err() != nil {
		out.err = errors.New("the run did not complete within 30s: stuck")
		return
	}
	if err := a.SurfaceDelayed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := work(faulty.New(inner, faulty.Config{}), "c"); err != nil {
		out.err = err
		return
	}
	out.err = check(ctx, inner)
	return
}

// faultWork runs one worker loop through be until the run is done, ctx
// ends or be crashes. Unless the run is seeded already it seeds first,
// rerunning a seed that failed transiently as an operator reruns cmd/seed.
// It reports whether the run is seeded.
func faultWork(ctx context.Context, t *testing.T, be *faulty.Backend, cfg RunConfig, seeded bool, id string) (bool, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-be.Crashed():
			stop()
		case <-ctx.Done():
		}
	}()
	var r *Run
	for r == nil {
		var err error
		if seeded {
			r, err = OpenRun(ctx, be, cfg.Name)
		} else {
			r, err = Seed(ctx, be, cfg)
		}
		switch {
		case err == nil:
			seeded = true
		case be.IsCrashed():
			return seeded, nil
		case !errors.Is(err, storage.ErrTransient):
			return seeded, fmt.Errorf("opening the run: %w", err)
		}
	}
	w, err := NewWorker(r, faultWorker(id), testLogger(t), nil)
	if err != nil {
		return seeded, err
	}
	w.Run(ctx)
	return seeded, nil
}

// checkRun compares a finished run with the reference, position by
// position, and checks that it left nothing behind: no message in the work
// or poison queue, no blob but the final and result blobs, and an audit
// without findings.
func checkRun(ctx context.Context, be storage.Backend, cfg RunConfig, ref *reference.Result) error {
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		return err
	}
	rep, err := r.Report(ctx)
	if err != nil {
		return err
	}
	if !rep.Complete || rep.Root != ref.Report.Root || len(rep.Plies) != len(ref.Report.Plies) {
		return fmt.Errorf("complete %v, root %s, %d plies; reference root %s, %d plies", rep.Complete, rep.Root, len(rep.Plies), ref.Report.Root, len(ref.Report.Plies))
	}
	for i, g := range rep.Plies {
		w := ref.Report.Plies[i]
		if [7]int64{w.Positions, w.Terminal, w.Edges, w.BlackWins, w.WhiteWins, w.Draws, w.Unknown} != [7]int64{g.Positions, g.Terminal, g.Edges, g.BlackWins, g.WhiteWins, g.Draws, g.Unknown} {
			return fmt.Errorf("ply %d: pipeline %+v, reference %+v", i, g, w)
		}
		got, err := r.Results(ctx, i)
		if err != nil {
			return err
		}
		for p, res := range ref.Plies[i] {
			if got[p] != res {
				return fmt.Errorf("ply %d position %s: %v, reference %v", i, p.Text(), got[p], res)
			}
		}
	}
	return checkClean(ctx, r, cfg)
}

// checkClean checks that a finished run left nothing behind: no message
// in the work, compensation or poison queue, no blob but the final and result blobs,
// and an audit without findings.
func checkClean(ctx context.Context, r *Run, cfg RunConfig) error {
	for _, q := range []storage.Queue{r.work, r.compensation, r.poison} {
		if n, err := q.ApproximateLength(ctx); err != nil || n != 0 {
			msgs, _ := q.Peek(ctx, 3)
			return fmt.Errorf("queue %s holds %d messages (%v), first %+v", q.Name(), n, err, msgs)
		}
	}
	live := map[string]bool{}
	for ply := 0; ply <= cfg.Target; ply++ {
		finals, err := r.store.Finals(ctx, ply)
		if err != nil {
			return err
		}
		for _, f := range finals {
			live[f.Blob], live[runstore.ResultsBlobName(ply, f.Index)] = true, true
		}
	}
	list, err := r.blobs.List(ctx, "")
	if err != nil {
		return err
	}
	var stray []string
	for _, b := range list {
		if !live[b.Name] {
			stray = append(stray, b.Name)
		}
	}
	if len(stray) > 0 {
		return fmt.Errorf("%d blobs left behind that no ply lists: %v", len(stray), stray)
	}
	a, err := r.Audit(ctx)
	if err != nil {
		return err
	}
	if len(a.Findings) > 0 {
		return fmt.Errorf("audit: %s: %v", a.Summary(), a.Findings)
	}
	return nil
}

// faultSweep runs cfg once per planned fault and reports every run that
// did not converge exactly, naming the call the fault struck.
func faultSweep(t *testing.T, cfg RunConfig, modes []faulty.Mode, ks func(calls int64) []int64) {
	ref, err := reference.Enumerate(board.MustNew(cfg.Board), cfg.Target)
	if err != nil {
		t.Fatal(err)
	}
	check := func(ctx context.Context, be storage.Backend) error { return checkRun(ctx, be, cfg, ref) }
	clean := runWithFault(t, cfg, check, faulty.Config{})
	if clean.err != nil {
		t.Fatalf("run without faults: %v", clean.err)
	}
	list := ks(clean.calls)
	t.Logf("%s: a run without faults makes %d storage calls; striking %d of them in each of %d modes", cfg.Name, clean.calls, len(list), len(modes))
	for _, mode := range modes {
		var longest int64
		failed := 0
		for _, k := range list {
			start := time.Now()
			o := runWithFault(t, cfg, check, faulty.Config{Mode: mode, At: k})
			if os.Getenv("FAULT_TRACE") != "" {
				t.Logf("%s at %s: %v, %d calls, %v", mode, o.fired, time.Since(start), o.calls, o.err)
			}
			longest = max(longest, o.calls)
			if o.err != nil {
				t.Errorf("%s at call %s: %v", mode, o.fired, o.err)
				if failed++; failed == 5 {
					t.Logf("%s: stopping after %d failures", mode, failed)
					break
				}
			}
		}
		t.Logf("%s: %d of %d runs failed; the first worker made up to %d calls", mode, failed, len(list), longest)
	}
}

var allModes = []faulty.Mode{faulty.FailBefore, faulty.FailAfter, faulty.CrashBefore, faulty.CrashAfter}

// TestFaultAtEveryCall strikes every storage call of a 6x6 run to ply 5
// (two expansion tasks feed ply 5, whose merges read several runs and
// write eleven final blobs), in every fault mode: a transient failure
// before or after the call reaches storage, and a crash before or after
// it (the worker dies; its messages reappear to a fresh worker). Every run
// must end with exactly the reference's positions and results, both
// queues empty and no blob but the final and result blobs. The second
// run has a combine level at ply 5 (seven expansion runs, more than
// twice the fan-in of three, which wide buckets would take without a
// level: three groups, two ranges of buckets), so every call of its
// combine tasks and of the scans between the two merge steps is struck.
func TestFaultAtEveryCall(t *testing.T) {
	// The fault sweeps (this, TestFaultSample and TestFaultPrunedSolve)
	// are the package's longest tests, four of its seven minutes on a
	// 2-core machine. Each of their runs has a store of its own, so they
	// run in parallel with each other, after the package's other tests,
	// and the package's end in make test takes both cores once the other
	// packages are done.
	t.Parallel()
	for _, cfg := range []RunConfig{
		{Name: "faults", Config: runstore.Config{Board: 6, Target: 5, Sizes: runstore.Sizes{BlobPositions: 40, BucketBlobs: 2}}},
		{Name: "faultlevels", Config: runstore.Config{Board: 6, Target: 5, Sizes: runstore.Sizes{BlobPositions: 9, BucketBlobs: 20, MergeFanIn: 3}}},
	} {
		t.Run(cfg.Name, func(t *testing.T) {
			t.Parallel() // each run has a store of its own; one worker a run
			faultSweep(t, cfg, allModes, everyCall)
		})
	}
}

func everyCall(n int64) []int64 {
	ks := make([]int64, n)
	for i := range ks {
		ks[i] = int64(i + 1)
	}
	return ks
}

// TestFaultSample strikes a seeded random sample of the calls of runs
// the exhaustive sweep would make too slow: 4x4 to the end of the game
// (terminal positions, wins, losses and draws to propagate); 6x6 to ply
// 5 with blobs so small that merges run in several rounds; the same
// with a fan-in of 2, so that its later plies have several combine
// levels (ply 5: two, over eight expansion runs), each started through
// its tree of first tasks and releasing the runs below it; and 8x8 to
// ply 5 with final blobs of two positions, a bucket each, and a fan-in
// of 2, whose last combine level has groups of about 90 ranges, each
// group's tasks started through a tree of tasks (dedup's treeChildren).
// FAULT_SEED sets the seed; FAULT_SAMPLE the calls per mode ("all" strikes
// every call: about 3,000 runs for 4x4, a few minutes).
func TestFaultSample(t *testing.T) {
	t.Parallel() // as TestFaultAtEveryCall says
	if testing.Short() {
		t.Skip("a sample of faulty runs")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FAULT_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FAULT_SEED=%q: %v", s, err)
		}
	}
	t.Logf("FAULT_SEED=%d", seed)
	sample := func(n int64) []int64 { return randomCalls(t, seed, n) }
	for _, cfg := range []RunConfig{
		{Name: "faultfour", Config: runstore.Config{Board: 4, Target: 12}},
		{Name: "faultsix", Config: runstore.Config{Board: 6, Target: 5, Sizes: runstore.Sizes{BlobPositions: 25, BucketBlobs: 2}}},
		{Name: "faultdeep", Config: runstore.Config{Board: 6, Target: 5, Sizes: runstore.Sizes{BlobPositions: 8, BucketBlobs: 4, MergeFanIn: 2}}},
		{Name: "faultgroups", Config: runstore.Config{Board: 8, Target: 5, Sizes: runstore.Sizes{BlobPositions: 2, BucketBlobs: 1, MergeFanIn: 2}}},
	} {
		t.Run(cfg.Name, func(t *testing.T) { faultSweep(t, cfg, allModes, sample) })
	}
}

// randomCalls picks FAULT_SAMPLE (default 30) distinct calls of n.
func randomCalls(t *testing.T, seed uint64, n int64) []int64 {
	size := 30
	switch s := os.Getenv("FAULT_SAMPLE"); s {
	case "":
	case "all":
		return everyCall(n)
	default:
		var err error
		if size, err = strconv.Atoi(s); err != nil || size < 1 {
			t.Fatalf("FAULT_SAMPLE=%q: want a positive number or all", s)
		}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	ks := everyCall(n)
	rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	ks = ks[:min(int64(size), n)]
	slices.Sort(ks)
	return ks
}

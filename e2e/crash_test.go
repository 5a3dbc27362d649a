package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
)

// fleet is a set of cmd/worker processes on one run, each logging to its
// own file, whose exits arrive on one channel.
type fleet struct {
	t       *testing.T
	bin     string
	run     string
	args    []string
	dir     string
	next    int
	live    map[string]*workerProc
	exited  chan *workerProc
	started int
}

type workerProc struct {
	id     string
	cmd    *exec.Cmd
	log    string
	killed bool  // by the test, with SIGKILL
	err    error // from Wait
}

func newFleet(t *testing.T, bin, run string, args ...string) *fleet {
	f := &fleet{t: t, bin: bin, run: run, args: args, dir: t.TempDir(), live: map[string]*workerProc{}, exited: make(chan *workerProc, 64)}
	t.Cleanup(func() {
		for _, p := range f.live {
			_ = p.cmd.Process.Kill()
		}
	})
	return f
}

// start launches one more worker.
func (f *fleet) start() *workerProc {
	f.t.Helper()
	id := fmt.Sprintf("w%02d", f.next)
	f.next++
	p := &workerProc{id: id, log: filepath.Join(f.dir, id+".log")}
	out, err := os.Create(p.log)
	if err != nil {
		f.t.Fatal(err)
	}
	// Debug logs: a line per completed task, the progress kills key on.
	p.cmd = command(f.bin, "worker", append([]string{"-run", f.run, "-id", id, "-log-level", "debug"}, f.args...)...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	out.Close()
	f.live[id] = p
	f.started++
	go func() {
		p.err = p.cmd.Wait()
		f.exited <- p
	}()
	return p
}

// kill sends SIGKILL to a live worker; its exit arrives on f.exited.
func (f *fleet) kill(p *workerProc) {
	p.killed = true
	delete(f.live, p.id)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		f.t.Logf("killing %s: %v", p.id, err)
	}
}

// ids lists the live workers in a fixed order, so a seeded choice among
// them is repeatable.
func (f *fleet) ids() []string {
	ids := make([]string, 0, len(f.live))
	for id := range f.live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// dumpLogs shows the tail of every worker's log, but the task lines.
func (f *fleet) dumpLogs() {
	entries, _ := os.ReadDir(f.dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(f.dir, e.Name()))
		lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(string(b)), "\n"), func(l string) bool { return strings.Contains(l, taskDoneJSON) })
		f.t.Logf("%s (last lines):\n%s", e.Name(), strings.Join(lines[max(0, len(lines)-8):], "\n"))
	}
}

// countLines counts the log lines, over every worker, that contain s.
func (f *fleet) countLines(s string) int {
	n := 0
	entries, _ := os.ReadDir(f.dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(f.dir, e.Name()))
		n += strings.Count(string(b), s)
	}
	return n
}

// envInt reads an optional numeric test setting.
func envInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a non-negative integer", name, s)
	}
	return n
}

// drain runs one worker (without -exit-when-done) on a complete run until
// the work and compensation queues are empty: compensation messages of
// killed workers surface only after their delay, after the run may be
// complete.
func drain(t *testing.T, bin, run string, deadline time.Duration, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	f := newFleet(t, bin, run, args...)
	be := azuretest.Open(t)
	var p *workerProc
	for {
		n, err := 0, error(nil)
		for _, name := range []string{pipeline.WorkQueue(run), pipeline.CompensationQueue(run)} {
			m, qerr := be.Queue(name).ApproximateLength(ctx)
			n, err = n+m, errors.Join(err, qerr)
		}
		if err == nil && n == 0 {
			break
		}
		if p == nil {
			p = f.start()
		}
		select {
		case <-ctx.Done():
			f.dumpLogs()
			t.Fatalf("the work and compensation queues still hold %d messages (%v) after %v of draining", n, err, deadline)
		case e := <-f.exited:
			f.dumpLogs()
			t.Fatalf("the draining worker exited: %v", e.err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	if p == nil {
		return
	}
	delete(f.live, p.id)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Exit 0, or killed by the signal if it came before the worker
	// installed its handler.
	if e := <-f.exited; e.err != nil && !strings.Contains(e.err.Error(), "signal: terminated") {
		f.dumpLogs()
		t.Fatalf("the draining worker did not stop cleanly on SIGTERM: %v", e.err)
	}
}

// checkFinished wants a complete run equal to the reference engine's,
// clean under inspect -check, with empty work, compensation and poison queues.
func checkFinished(t *testing.T, bin, run string, size, target int) {
	t.Helper()
	rep, table := inspectReport(t, bin, run)
	ref, err := reference.Enumerate(board.MustNew(size), target)
	if err != nil {
		t.Fatal(err)
	}
	sameCounts(t, rep, ref.Report, table)
	checkClean(t, bin, run)
	be := azuretest.Open(t)
	for _, name := range []string{pipeline.WorkQueue(run), pipeline.CompensationQueue(run), pipeline.PoisonQueue(run)} {
		n, err := be.Queue(name).ApproximateLength(context.Background())
		if err != nil || n != 0 {
			msgs, _ := be.Queue(name).Peek(context.Background(), 5)
			t.Errorf("queue %s: %d messages (%v), want none; first %+v", name, n, err, msgs)
		}
	}
}

func sameCounts(t *testing.T, got, want *report.Report, table string) {
	t.Helper()
	if !got.Complete || got.Root != want.Root || len(got.Plies) != len(want.Plies) {
		t.Fatalf("complete %v, root %s, %d plies; want complete, root %s, %d plies\n%s", got.Complete, got.Root, len(got.Plies), want.Root, len(want.Plies), table)
	}
	for i, g := range got.Plies {
		w := want.Plies[i]
		if [7]int64{g.Positions, g.Terminal, g.Edges, g.BlackWins, g.WhiteWins, g.Draws, g.Unknown} != [7]int64{w.Positions, w.Terminal, w.Edges, w.BlackWins, w.WhiteWins, w.Draws, w.Unknown} {
			t.Errorf("ply %d: %+v, reference %+v", i, g, w)
		}
	}
}

// TestCrashRandomWorkers runs 8x8 through ply 8 on Azurite with three
// worker processes and a short visibility timeout, SIGKILLs a random
// worker CRASH_KILLS times (default 15), starting a replacement each
// time, and wants the run to finish with the reference's counts, a clean
// inspect -check and empty queues. Kills land at points of progress, not
// of time: after seeded random numbers of tasks completed over every
// worker (counted from their debug logs), all below the tasks of an
// uninterrupted run, so a fast and a slow machine see every kill. The
// schedule (the points and the victims) comes from CRASH_SEED, logged at
// the start; where exactly in its task a victim dies still depends on
// timing.
func TestCrashRandomWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("kills worker processes on Azurite")
	}
	azurite(t)
	bin := binaries(t)
	seed := envInt(t, "CRASH_SEED", uint64(time.Now().UnixNano()))
	kills := int(envInt(t, "CRASH_KILLS", 15))
	t.Logf("CRASH_SEED=%d CRASH_KILLS=%d", seed, kills)
	rng := rand.New(rand.NewPCG(seed, 0))

	run := runName("k")
	const size, target = 8, 8
	// Ply 8 is fed by eight expansion runs, more than twice the fan-in
	// of 3 (up to twice it, a ply is merged in wide buckets without a
	// level): its buckets are merged in two levels, so kills also land
	// in combine tasks. This run takes about 110 tasks uninterrupted (more with kills, as
	// killed tasks are done again); the kills land within its first 80.
	const tasks = 80
	if out, err := command(bin, "seed", "-run", run, "-board", fmt.Sprint(size), "-plies", fmt.Sprint(target), "-blob-positions", "1500", "-bucket-blobs", "6",
		"-merge-fan-in", "3").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	points := killPoints(rng, kills, 1, tasks)
	t.Logf("kills after %v completed tasks", points)
	// A message of a killed worker reappears after 3s; its compensation
	// messages surface after 9s. A message is poisoned only after 100
	// deliveries, so the kills alone never poison one.
	workerArgs := []string{"-visibility", "3s", "-compensation-delay", "9s", "-max-dequeue", "100"}
	f := newFleet(t, bin, run, append([]string{"-exit-when-done"}, workerArgs...)...)
	for range 3 {
		f.start()
	}
	const limit = 6 * time.Minute
	deadline := time.After(limit)
	// How often the logs are read for progress, not a pause before a kill.
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	killed, finished := 0, false
	for len(f.live) > 0 {
		select {
		case <-deadline:
			f.dumpLogs()
			t.Fatalf("the run was not complete after %v and %d kills (CRASH_SEED=%d)", limit, killed, seed)
		case p := <-f.exited:
			if p.killed {
				continue
			}
			delete(f.live, p.id)
			if p.err != nil {
				f.dumpLogs()
				t.Fatalf("worker %s exited: %v (CRASH_SEED=%d)", p.id, p.err, seed)
			}
			finished = true // -exit-when-done: the run is complete
		case <-poll.C:
			if finished || killed == len(points) || f.countLines(taskDoneJSON) < points[killed] {
				continue
			}
			ids := f.ids()
			f.kill(f.live[ids[rng.IntN(len(ids))]])
			killed++
			f.start()
		}
	}
	n, _ := azuretest.Open(t).Queue(pipeline.WorkQueue(run)).ApproximateLength(context.Background())
	t.Logf("run complete after %d kills and %d tasks, %d worker processes in all; %d messages left to drain", killed, f.countLines(taskDoneJSON), f.started, n)
	if killed < kills {
		t.Errorf("the run finished after %d of %d kills: it took fewer than the %d tasks the kill points assume (CRASH_SEED=%d)", killed, kills, tasks, seed)
	}
	drain(t, bin, run, 2*time.Minute, workerArgs...)
	checkFinished(t, bin, run, size, target)
}

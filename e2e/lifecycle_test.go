package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/report"
)

// killPoints draws n distinct numbers of completed tasks in [lo, hi),
// in increasing order: the progress at which the kills of a crash test
// land, so that a fast and a slow machine see the same kills.
func killPoints(rng *rand.Rand, n, lo, hi int) []int {
	if hi-lo < n {
		panic(fmt.Sprintf("%d kill points do not fit in [%d, %d)", n, lo, hi))
	}
	picked := map[int]bool{}
	for len(picked) < n {
		picked[lo+rng.IntN(hi-lo)] = true
	}
	points := make([]int, 0, n)
	for p := range picked {
		points = append(points, p)
	}
	slices.Sort(points)
	return points
}

// taskDone is the debug line the worker loops log for every completed
// task (enumerate logs text, cmd/worker JSON).
const (
	taskDoneText = `msg="task done"`
	taskDoneJSON = `"msg":"task done"`
)

// enumerateProc is a cmd/enumerate process whose standard error is read
// as it comes: completed tasks are counted, other lines kept.
type enumerateProc struct {
	cmd   *exec.Cmd
	tasks chan struct{} // one per completed task; closed at the end of stderr
	// late counts the tasks that wait found on stderr: completed after
	// the last awaitTasks returned, before the process ended.
	late  int
	mu    sync.Mutex
	lines []string // stderr but the task lines
}

// startEnumerate starts enumerate with debug logs, so every completed
// task is a line on its standard error.
func startEnumerate(t *testing.T, bin string, args ...string) *enumerateProc {
	t.Helper()
	p := &enumerateProc{cmd: command(bin, "enumerate", append(args, "-quiet", "-log-level", "debug")...), tasks: make(chan struct{}, 1<<16)}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	go func() {
		defer close(p.tasks)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), taskDoneText) {
				p.tasks <- struct{}{}
				continue
			}
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
	}()
	return p
}

// awaitTasks waits until the process has completed n tasks; false if it
// ended first.
func (p *enumerateProc) awaitTasks(n int) bool {
	for range n {
		if _, ok := <-p.tasks; !ok {
			return false
		}
	}
	return true
}

// wait reads the rest of standard error, waits for the exit and returns
// the exit code (-1 for a signal) and the lines other than tasks. The
// tasks completed but not yet awaited are added to p.late.
func (p *enumerateProc) wait() (int, []string, error) {
	for range p.tasks {
		p.late++
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.ProcessState.ExitCode(), p.lines, nil
}

// The run of the embedded tests: 8x8 to ply 9 in small blobs and small
// buckets, about 85 tasks, a few seconds.
var embeddedRun = []string{"-board", "8", "-plies", "9", "-blob-positions", "20000", "-bucket-blobs", "2", "-workers", "2"}

// embeddedTasks is fewer than the tasks of embeddedRun: a kill drawn
// below it lands before the run can end.
const embeddedTasks = 60

var (
	cleanOnce sync.Once
	cleanRep  *report.Report
	cleanErr  error
)

// cleanReport is embeddedRun's report, uninterrupted, made once.
func cleanReport(t *testing.T, bin string) *report.Report {
	t.Helper()
	cleanOnce.Do(func() {
		dir := t.TempDir()
		path := filepath.Join(dir, "clean.json")
		out, err := command(bin, "enumerate", append([]string{"-data", filepath.Join(dir, "data"), "-run", "clean", "-quiet", "-json", path}, embeddedRun...)...).CombinedOutput()
		if err != nil {
			cleanErr = fmt.Errorf("the uninterrupted run: %v\n%s", err, out)
			return
		}
		cleanRep = readReport(t, path)
	})
	if cleanErr != nil {
		t.Fatal(cleanErr)
	}
	return cleanRep
}

// sameResult wants a complete report with the clean run's counts and
// results on every ply.
func sameResult(t *testing.T, got, clean *report.Report) {
	t.Helper()
	if diff := report.Diff(clean, got); diff != "" {
		t.Errorf("the resumed run differs from the uninterrupted one: %s", diff)
	}
	if !got.Complete || got.Root != clean.Root || got.TargetPly != clean.TargetPly || len(got.Plies) != len(clean.Plies) {
		t.Errorf("complete %v, root %s, target %d, %d plies; the uninterrupted run: complete, root %s, target %d, %d plies",
			got.Complete, got.Root, got.TargetPly, len(got.Plies), clean.Root, clean.TargetPly, len(clean.Plies))
	}
}

// TestEmbeddedKillAndResume SIGKILLs enumerate -data DIR at seeded random
// points of its progress (after so many completed tasks, counted from its
// debug log) EMBEDDED_KILLS times (default 6), starting the same command,
// with no -run, again after each kill, then lets it finish: the report must equal an
// uninterrupted run's, and once a worker has handled the compensation
// messages of the killed tasks, the run must check clean. EMBEDDED_SEED
// (logged) repeats a schedule.
func TestEmbeddedKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills enumerate processes")
	}
	bin := binaries(t)
	seed := envInt(t, "EMBEDDED_SEED", uint64(time.Now().UnixNano()))
	kills := int(envInt(t, "EMBEDDED_KILLS", 6))
	t.Logf("EMBEDDED_SEED=%d EMBEDDED_KILLS=%d", seed, kills)
	points := killPoints(rand.New(rand.NewPCG(seed, 0)), kills, 1, embeddedTasks)
	clean := cleanReport(t, bin)

	// A short visibility: the compensation messages of killed tasks
	// surface after 8s, for the worker below to drain.
	data := filepath.Join(t.TempDir(), "data")
	// No -run: with -data, the same command continues the same run
	// (named "run"), which is all a person who killed it has to go on.
	args := append([]string{"-data", data, "-visibility", "2s"}, embeddedRun...)
	// Tasks completed over every killed process, counting those a process
	// finished between the line that triggered its kill and its death:
	// on a loaded machine the test reads its log late, and the next
	// process must not be given the work they did again.
	done := 0
	for i, at := range points {
		p := startEnumerate(t, bin, args...)
		if !p.awaitTasks(at - done) {
			code, lines, err := p.wait()
			t.Fatalf("kill %d: enumerate ended (exit %d, %v) before %d tasks in all (EMBEDDED_SEED=%d):\n%s", i+1, code, err, at, seed, strings.Join(lines, "\n"))
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.wait(); err != nil {
			t.Fatal(err)
		}
		done = max(done, at) + p.late
	}
	path := filepath.Join(t.TempDir(), "resumed.json")
	p := startEnumerate(t, bin, append(args, "-json", path)...)
	if code, lines, err := p.wait(); code != 0 || err != nil {
		t.Fatalf("the last run: exit %d, %v (EMBEDDED_SEED=%d)\n%s", code, err, seed, strings.Join(lines, "\n"))
	}
	t.Logf("kills drawn after %v completed tasks in all; %d tasks were done when the last kill landed", points, done)
	sameResult(t, readReport(t, path), clean)
	// The killed tasks' orphans go once their compensation messages are
	// handled; then the run must check clean.
	if out, err := command(bin, "worker", "-data", data, "-run", "run", "-exit-when-done", "-visibility", "2s", "-log-level", "warn").CombinedOutput(); err != nil {
		t.Fatalf("draining worker: %v\n%s", err, out)
	}
	out, err := command(bin, "inspect", "-data", data, "-run", "run", "-check").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "check clean: ") {
		t.Errorf("inspect -check after draining: %v\n%s", err, out)
	}
}

// TestEnumerateInterruptAndResume sends SIGINT to enumerate -data DIR at
// a seeded random point of its progress: it must exit with status 130
// within 10s, its one line on standard error must say how far the run
// got and the command that resumes it, and that command, run as printed,
// must finish the run exactly.
func TestEnumerateInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts an enumerate process")
	}
	bin := binaries(t)
	seed := envInt(t, "EMBEDDED_SEED", uint64(time.Now().UnixNano()))
	at := killPoints(rand.New(rand.NewPCG(seed, 1)), 1, 10, embeddedTasks)[0]
	t.Logf("EMBEDDED_SEED=%d: SIGINT after %d tasks", seed, at)
	clean := cleanReport(t, bin)

	data := filepath.Join(t.TempDir(), "data")
	p := startEnumerate(t, bin, append([]string{"-data", data, "-run", "stopped"}, embeddedRun...)...)
	if !p.awaitTasks(at) {
		code, lines, err := p.wait()
		t.Fatalf("enumerate ended (exit %d, %v) before %d tasks:\n%s", code, err, at, strings.Join(lines, "\n"))
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	type exit struct {
		code  int
		lines []string
		err   error
	}
	exited := make(chan exit, 1)
	go func() {
		code, lines, err := p.wait()
		exited <- exit{code, lines, err}
	}()
	var e exit
	select {
	case e = <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("enumerate did not exit within 10s of SIGINT")
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	if e.code != 130 || len(e.lines) != 1 {
		t.Fatalf("exit %d with %d lines on stderr, want 130 and one line:\n%s", e.code, len(e.lines), strings.Join(e.lines, "\n"))
	}
	line := e.lines[0]
	want := "resume with: enumerate -data " + data + " -run stopped -board 8 -plies 9 -blob-positions 20000 -bucket-blobs 2 -grow-from 11 -merge-fan-in 1024"
	if !strings.HasPrefix(line, "enumerate: interrupted ") || !strings.HasSuffix(line, want) || !strings.Contains(line, "tasks done by this process") {
		t.Fatalf("stderr %q: want how far the run got and %q", line, want)
	}
	t.Log(line)
	_, resume, _ := strings.Cut(line, "resume with: ")
	words := strings.Fields(resume)
	path := filepath.Join(t.TempDir(), "resumed.json")
	if out, err := command(bin, words[0], append(words[1:], "-quiet", "-json", path)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", resume, err, out)
	}
	sameResult(t, readReport(t, path), clean)
}

// TestCalibrateInterrupted: SIGINT while -plan -calibrate times the
// machine stops the yardstick's run, which removes its directory from
// the system's temporary directory, and exits 130 with one line. The
// signal comes once that directory exists.
func TestCalibrateInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts an enumerate process")
	}
	bin := binaries(t)
	tmp := t.TempDir()
	cmd := command(bin, "enumerate", "-plan", "-calibrate", "-plies", "10")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("enumerate -plan -calibrate ended (%v) before its yardstick made a directory: %s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("enumerate -plan -calibrate did not exit within 30s of SIGINT")
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if code := cmd.ProcessState.ExitCode(); code != 130 || lines[len(lines)-1] != "enumerate: -calibrate interrupted: no plan" {
		t.Fatalf("exit %d, stderr %q: want 130 and that the calibration was interrupted", code, stderr.String())
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) > 0 {
		t.Errorf("left in the temporary directory: %v (%v)", entries, err)
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
)

// checkClean runs inspect -check on a run and wants exit 0 and only the
// clean summary line.
func checkClean(t *testing.T, bin, run string) {
	t.Helper()
	out, err := command(bin, "inspect", "-run", run, "-check").CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "check clean: run ") {
		t.Fatalf("inspect -check: %v\n%s\nwant exit 0 and one clean summary line", err, out)
	}
	t.Logf("inspect -check: %s", lines[0])
}

// TestCheckFindsAStalledRun seeds a run, checks it is clean while its
// first message waits, removes that message and wants inspect -check to
// exit 1 with the one finding and the summary.
func TestCheckFindsAStalledRun(t *testing.T) {
	azurite(t)
	bin := binaries(t)
	run := runName("c")
	if out, err := command(bin, "seed", "-run", run, "-board", "4").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	checkClean(t, bin, run)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := azuretest.Open(t).Queue(pipeline.WorkQueue(run))
	msgs, err := q.Dequeue(ctx, 32, time.Minute)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("dequeue: %d messages, %v; want the seed's one", len(msgs), err)
	}
	if err := q.Delete(ctx, msgs[0].ID, msgs[0].PopReceipt); err != nil {
		t.Fatal(err)
	}
	c := command(bin, "inspect", "-run", run, "-check")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("inspect -check on a stalled run: %v, want exit code 1", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 || lines[0] != "error: the run is not complete but its work queue is empty: nothing is left to make progress" ||
		!strings.HasPrefix(lines[1], "check 1 errors: run in progress;") {
		t.Errorf("stdout %q; want the finding and the summary", stdout.String())
	}
	if want := "inspect: the check found problems in run " + run + "\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestCheckListsPoisonOnAzurite puts malformed messages on a run's work
// queue on Azurite, lets a worker process run it to its end, and wants the
// run's counts exact and inspect -check to exit 1 listing each poisoned
// message with its reason, and nothing else.
func TestCheckListsPoisonOnAzurite(t *testing.T) {
	azurite(t)
	bin := binaries(t)
	run := runName("p")
	if out, err := command(bin, "seed", "-run", run, "-board", "4", "-plies", "6").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := azuretest.Open(t).Queue(pipeline.WorkQueue(run))
	bad := map[string]string{
		"garbage":                    `the ply must be two digits`,
		"Z05-abc":                    `unknown kind 'Z'`,
		"M03-b0":                     `merge message "M03-b0": expected M<ply>-<index>`,
		"X02-p03/f-0123456789abcdef": `blob "p03/f-0123456789abcdef" is not in ply 2's folder p02/`,
		"R00-0":                      `ply 1 is not resolved yet, so ply 0 cannot be resolved`,
	}
	for text := range bad {
		if _, err := q.Enqueue(ctx, text, storage.EnqueueOptions{TTL: -1}); err != nil {
			t.Fatal(err)
		}
	}
	w := command(bin, "worker", "-run", run, "-exit-when-done", "-visibility", "20s", "-log-format", "text")
	var logs strings.Builder
	w.Stdout, w.Stderr = &logs, &logs
	if err := w.Run(); err != nil {
		t.Fatalf("worker: %v\n%s", err, logs.String())
	}
	if n := strings.Count(logs.String(), "message moved to the poison queue"); n != len(bad) {
		t.Errorf("%d poison log lines for %d bad messages:\n%s", n, len(bad), logs.String())
	}
	rep, _ := inspectReport(t, bin, run)
	if !rep.Complete || len(rep.Plies) != 7 {
		t.Fatalf("complete %v with %d plies, want complete with 7", rep.Complete, len(rep.Plies))
	}
	for i, p := range rep.Plies {
		if got, want := [3]int64{p.Positions, p.Terminal, p.Edges}, [3]int64(testkit.Ref4x4[i][:3]); got != want {
			t.Errorf("ply %d: positions, terminal, edges %v, want %v", i, got, want)
		}
	}

	c := command(bin, "inspect", "-run", run, "-check")
	var stdout strings.Builder
	c.Stdout = &stdout
	err := c.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("inspect -check: %v, want exit code 1\n%s", err, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != len(bad)+1 || !strings.HasPrefix(lines[len(lines)-1], fmt.Sprintf("check %d errors: run complete;", len(bad))) {
		t.Fatalf("inspect -check printed:\n%s\nwant %d poison lines and the summary", stdout.String(), len(bad))
	}
	for _, line := range lines[:len(bad)] {
		ok := false
		for text, reason := range bad {
			if strings.HasPrefix(line, fmt.Sprintf("error: poison queue: message %q: bad message: ", text)) && strings.HasSuffix(line, reason) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("unexpected finding %q", line)
		}
	}
}

package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
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

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
)

// privateAzurite is an Azurite of one test's own, with its data on disk,
// driven by scripts/azurite.sh with a state directory of its own.
type privateAzurite struct {
	t      *testing.T
	script string
	state  string
	cs     string // connection string
}

// startPrivateAzurite starts an Azurite with --location on free ports and
// stops it when the test ends.
func startPrivateAzurite(t *testing.T) *privateAzurite {
	t.Helper()
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".tools", "azurite", "node_modules", ".bin", "azurite")); err != nil {
		if os.Getenv(azuretest.EnvRequire) == "1" {
			t.Fatal("Azurite is not installed in .tools/azurite (scripts/azurite.sh install)")
		}
		t.Skip("Azurite is not installed in .tools/azurite; run make test")
	}
	a := &privateAzurite{t: t, script: filepath.Join(root, "scripts", "azurite.sh"), state: t.TempDir()}
	out := a.do("start", "--location", t.TempDir())
	t.Cleanup(func() { a.do("stop") })
	m := regexp.MustCompile(`AZURE_STORAGE_CONNECTION_STRING='([^']+)'`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no connection string in %q", out)
	}
	a.cs = m[1]
	return a
}

func (a *privateAzurite) do(args ...string) string {
	a.t.Helper()
	cmd := exec.Command("bash", append([]string{a.script}, args...)...)
	cmd.Env = append(os.Environ(), "AZURITE_STATE_DIR="+a.state)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		a.t.Fatalf("azurite.sh %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// outage stops Azurite, keeps it down for down, and starts it again on
// the same ports with the same data.
func (a *privateAzurite) outage(down time.Duration) {
	a.t.Helper()
	a.do("stop")
	time.Sleep(down) // the length of the outage, not a wait for anything
	a.do("restart")
}

// TestAzuriteRestartMidRun runs 8x8 through ply 8 with two worker
// processes on an Azurite of its own with its data on disk, and stops
// Azurite for a few seconds twice while they work: once ply 5 is complete
// and once ply 7 is. The workers must ride out each outage on their
// retries without exiting, and the run must finish exactly, check clean,
// with empty queues.
func TestAzuriteRestartMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts an emulator")
	}
	azurite(t)
	bin := binaries(t)
	az := startPrivateAzurite(t)
	// Every command, and azuretest, now reach the private Azurite.
	t.Setenv(azure.EnvConnectionString, az.cs)

	run := runName("r")
	const size, target = 8, 8
	if out, err := command(bin, "seed", "-run", run, "-board", fmt.Sprint(size), "-plies", fmt.Sprint(target), "-blob-positions", "3000", "-bucket-blobs", "4").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	workerArgs := []string{"-visibility", "5s", "-compensation-delay", "15s"}
	f := newFleet(t, bin, run, append([]string{"-exit-when-done"}, workerArgs...)...)
	for range 2 {
		f.start()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	r, err := pipeline.OpenRun(ctx, azuretest.Open(t), run)
	if err != nil {
		t.Fatal(err)
	}
	// noExit fails the test if a worker has exited: before the run is
	// complete none may.
	noExit := func(when string) {
		select {
		case p := <-f.exited:
			f.dumpLogs()
			t.Fatalf("worker %s exited %s: %v", p.id, when, p.err)
		default:
		}
	}
	for _, ply := range []int{5, 7} {
		for {
			rep, err := r.Report(ctx)
			if err != nil {
				t.Fatalf("reading progress: %v", err)
			}
			if rep.Complete {
				t.Fatalf("the run completed before ply %d was seen complete: nothing to restart during", ply)
			}
			if len(rep.Plies) > ply {
				break
			}
			noExit("before the restarts")
			select {
			case <-ctx.Done():
				f.dumpLogs()
				t.Fatalf("ply %d not complete in time", ply)
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Logf("ply %d complete: stopping Azurite for 3s", ply)
		start := time.Now()
		az.outage(3 * time.Second)
		t.Logf("Azurite back after %v", time.Since(start).Round(time.Millisecond))
		noExit("during an outage")
	}
	for len(f.live) > 0 {
		select {
		case <-ctx.Done():
			f.dumpLogs()
			t.Fatal("the run did not complete in time after the restarts")
		case p := <-f.exited:
			delete(f.live, p.id)
			if p.err != nil {
				f.dumpLogs()
				t.Fatalf("worker %s exited: %v", p.id, p.err)
			}
		}
	}
	t.Logf("run complete; the workers logged %d warnings", f.countLines(`"level":"WARN"`))
	drain(t, bin, run, 2*time.Minute, workerArgs...)
	checkFinished(t, bin, run, size, target)
}

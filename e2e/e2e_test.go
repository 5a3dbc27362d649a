// Package e2e runs the real commands as separate processes: cmd/seed,
// several cmd/worker processes and cmd/inspect against Azurite, and
// cmd/enumerate on embedded storage kept in a directory, interrupted and
// killed mid-run.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/report"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// TestMain removes the binaries after the tests: a temporary directory
// of some 200 MB that each test process would otherwise leave behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds every command under cmd/ once per test process.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "reversi-bin-")
		if buildErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "../cmd/...").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building ../cmd/...: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// azurite returns the connection string, or skips (fails under make test).
func azurite(t *testing.T) string {
	t.Helper()
	cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if cs == "" {
		if os.Getenv("REVERSI_REQUIRE_AZURITE") == "1" {
			t.Fatal("AZURE_STORAGE_CONNECTION_STRING is not set but REVERSI_REQUIRE_AZURITE=1")
		}
		t.Skip("AZURE_STORAGE_CONNECTION_STRING not set; run make test to start Azurite")
	}
	return cs
}

func runName(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
}

func command(bin, name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(bin, name), args...)
	c.Env = os.Environ()
	return c
}

// runDistributed seeds a run, runs workers processes until it completes,
// and returns inspect's JSON report.
func runDistributed(t *testing.T, size, plies, workers int, extra ...string) *report.Report {
	t.Helper()
	azurite(t)
	bin := binaries(t)
	run := runName("e")
	seedArgs := append([]string{"-run", run, "-board", fmt.Sprint(size), "-plies", fmt.Sprint(plies)}, extra...)
	if out, err := command(bin, "seed", seedArgs...).CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	// Seeding again with the same configuration changes nothing.
	if out, err := command(bin, "seed", seedArgs...).CombinedOutput(); err != nil {
		t.Fatalf("second seed: %v\n%s", err, out)
	}
	var procs []*exec.Cmd
	var logs []*bytes.Buffer
	for i := 0; i < workers; i++ {
		c := command(bin, "worker", "-run", run, "-exit-when-done", "-visibility", "20s", "-log-level", "warn", "-id", fmt.Sprintf("w%d", i))
		var buf bytes.Buffer
		c.Stdout, c.Stderr = &buf, &buf
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs, logs = append(procs, c), append(logs, &buf)
	}
	done := make(chan error, len(procs))
	for _, p := range procs {
		go func() { done <- p.Wait() }()
	}
	// A guard against a hung run, far beyond its time on a slow machine
	// (nothing is measured against it); go test -timeout gives long runs
	// more.
	guard := 8 * time.Minute
	if d, ok := t.Deadline(); ok {
		guard = max(guard, time.Until(d)-time.Minute)
	}
	timeout := time.After(guard)
	for range procs {
		select {
		case err := <-done:
			if err != nil {
				for i, l := range logs {
					t.Logf("worker %d log:\n%s", i, l.String())
				}
				t.Fatalf("worker exited: %v", err)
			}
		case <-timeout:
			for _, p := range procs {
				p.Process.Kill()
			}
			t.Fatal("workers did not finish in time")
		}
	}
	rep, out := inspectReport(t, bin, run)
	t.Logf("inspect:\n%s", out)
	checkClean(t, bin, run)
	return rep
}

// inspectReport runs inspect -json on a run and returns the report and
// the printed table.
func inspectReport(t *testing.T, bin, run string) (*report.Report, string) {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	out, err := command(bin, "inspect", "-run", run, "-json", jsonPath).CombinedOutput()
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	return readReport(t, jsonPath), string(out)
}

// readReport reads a report that a command wrote with -json.
func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rep
}

func TestAzurite4x4ToTheEnd(t *testing.T) {
	rep := runDistributed(t, 4, 12, 2, "-blob-positions", "500", "-bucket-blobs", "4")
	if !rep.Complete || rep.Root != "white" {
		t.Errorf("complete %v root %s, want complete white", rep.Complete, rep.Root)
	}
	if len(rep.Plies) != len(testkit.Ref4x4) {
		t.Fatalf("%d plies, want %d", len(rep.Plies), len(testkit.Ref4x4))
	}
	for i, p := range rep.Plies {
		if got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}; got != testkit.Ref4x4[i] {
			t.Errorf("ply %d: %v, want %v", i, got, testkit.Ref4x4[i])
		}
	}
	if rep.StorageTransactions <= 0 {
		t.Errorf("storage transactions %d: the workers recorded none", rep.StorageTransactions)
	}
	if rep.Score == nil || *rep.Score != (report.Score{Black: 3, White: 11}) {
		t.Errorf("perfect-play score %+v, want 3-11", rep.Score)
	}
	if rep.TransactionsByCategory["backtrack"] == 0 || rep.TransactionsPerEdgeByCategory["backtrack"] <= 0 {
		t.Errorf("no backtracking transactions reported per edge: %v", rep.TransactionsPerEdgeByCategory)
	}
	// inspect prices the CPU time the two worker processes recorded, and
	// the processor time they held.
	if c := rep.Cost; c == nil || c.Compute == nil || c.Compute.CPUSeconds <= 0 || c.Compute.VCPUHour != report.DefaultVCPUHour || c.TotalUSD <= c.TransactionsUSD {
		t.Errorf("cost %+v: want the workers' CPU priced at $%g a vCPU hour", c, report.DefaultVCPUHour)
	} else if u := c.Compute; u.HeldSeconds <= 0 || math.Abs(u.HeldUSD-u.HeldSeconds/3600*u.VCPUHour) > 1e-12 {
		t.Errorf("compute %+v: want the workers' processor time held, priced", u)
	}
	inspectPositions(t, rep.Run)
}

// inspectPositions asks inspect about single positions of a complete 4x4
// run: by key, by moves, one the run does not hold, and a malformed key.
func inspectPositions(t *testing.T, run string) {
	bin := binaries(t)
	b := board.MustNew(4)
	start := b.Start()
	first := b.SquareName(bits.TrailingZeros64(b.Moves(start)))
	unreachable := board.Position{Occ: start.Occ | 1, White: start.White, Side: board.White}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"start by key", []string{"-position", start.Text()}, 0,
			[]string{"ply        0", "result     white (perfect play 3-11)", "parents    0", "children   1 distinct"}},
		{"after one move", []string{"-moves", first}, 0,
			[]string{"after " + first + ":", "ply        1", "result     white (perfect play 3-11)", "best moves ", "parents    1"}},
		{"not in the run", []string{"-position", unreachable.Text()}, 1,
			[]string{"is not in run", "ply 1 holds no such position"}},
		{"malformed key", []string{"-position", "b12"}, 2, []string{"-position: "}},
		{"illegal move", []string{"-moves", "a1"}, 2, []string{"-moves: "}},
	} {
		out, err := command(bin, "inspect", append([]string{"-run", run}, tc.args...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%s: exit code %d, want %d\n%s", tc.name, code, tc.code, out)
		}
		if tc.code != 0 && strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("%s: error is not one line:\n%s", tc.name, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out)
			}
		}
	}
}

func TestAzurite8x8Ply7(t *testing.T) {
	rep := runDistributed(t, 8, 7, 2, "-blob-positions", "3000")
	positions := []int64{1, 1, 3, 14, 60, 322, 1773, 10649}
	edges := []int64{0, 4, 3, 14, 61, 340, 1893, 11906}
	if !rep.Complete || rep.Root != "unknown" || len(rep.Plies) != len(positions) {
		t.Fatalf("complete %v root %s plies %d", rep.Complete, rep.Root, len(rep.Plies))
	}
	for i, p := range rep.Plies {
		if p.Positions != positions[i] || p.Edges != edges[i] {
			t.Errorf("ply %d: %d positions %d edges, want %d and %d", i, p.Positions, p.Edges, positions[i], edges[i])
		}
	}
}

func TestSeedRefusesADifferentConfiguration(t *testing.T) {
	azurite(t)
	bin := binaries(t)
	run := runName("s")
	if out, err := command(bin, "seed", "-run", run, "-board", "4").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	out, err := command(bin, "seed", "-run", run, "-board", "6").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already exists") || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Errorf("reseeding with another board: err %v, output %q; want a one-line refusal", err, out)
	}
}

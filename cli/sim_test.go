package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnumerateSim runs the pipeline on a simulated account: the counts
// are the reference engine's (-verify), and the report carries what
// each ply's handlings cost and the audit of the run's end, clean, as
// an empty list of problems.
func TestEnumerateSim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.json")
	code, _, stderr := runCmd(t, Enumerate, "-storage", "sim", "-sim-latency", "1ms", "-board", "4", "-plies", "7", "-workers", "16", "-quiet", "-verify", "-json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := readReport(t, path)
	if !rep.Complete || rep.Audit == nil || rep.Audit.Problems == nil || len(rep.Audit.Problems) != 0 || !strings.HasPrefix(rep.Audit.Summary, "check clean: run complete") {
		t.Errorf("report: complete %v, audit %+v; want a complete run and a clean audit", rep.Complete, rep.Audit)
	}
	for _, p := range rep.Plies {
		if p.Tasks < 1 || p.EntityReads < 1 || p.MaxTaskTransactions < 1 || p.FinalBlobs != p.Blobs || p.MaxTaskSeconds <= 0 {
			t.Errorf("ply %d: what its handlings cost is missing: %+v", p.Ply, p)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"problems": []`) {
		t.Errorf("the report's audit does not list its problems as []")
	}
}

package e2e

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestFleetRehearsal runs a fleet of 512 workers over a simulated Azure
// account (enumerate -storage sim: every call waits a latency, and the
// account's scalability targets answer ServerBusy past their rates):
// 8x8 to ply 9 in final blobs of 16 positions, which gives a small ply
// the shape of a deep one (at ply 9: 4,218 expansion tasks, two combine
// levels, 506 bucket merges, 27,324 final blobs; some 43,000 handlings
// in all). The control plane is exercised at a scale no other test
// reaches: completion trees several levels deep, dispatch fanned out
// over leaves, hundreds of concurrent commits on shared partitions.
//
// Every ply must be the reference engine's (-verify), the audit of the
// run's end clean, and no handling may grow with its ply: a handling
// that read a ply's final-blob rows or its expansion markers whole
// (27,324 and 4,218 rows at ply 9) would be far past the bounds, which
// are about twice the largest handling seen (231 transactions and 186
// entities, at ply 8), and more for transactions, which count the
// ServerBusy answers of a faster machine's busier partitions. Nothing
// here depends on the machine's speed.
func TestFleetRehearsal(t *testing.T) {
	if testing.Short() {
		t.Skip("a fleet of 512 workers over some 43,000 handlings: about a minute of both cores")
	}
	bin := binaries(t)
	path := filepath.Join(t.TempDir(), "fleet.json")
	c := command(bin, "enumerate", "-storage", "sim", "-sim-latency", "10ms", "-board", "8", "-plies", "9",
		"-blob-positions", "16", "-bucket-blobs", "64", "-grow-from", "0", "-merge-fan-in", "64",
		"-workers", "512", "-quiet", "-verify", "-json", path)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		t.Fatalf("enumerate: %v\n%s", err, out.String())
	}
	rep := readReport(t, path)
	if !rep.Complete || len(rep.Plies) != 10 {
		t.Fatalf("complete %v, %d plies; want a complete run of plies 0 to 9\n%s", rep.Complete, len(rep.Plies), out.String())
	}
	if rep.Audit == nil || len(rep.Audit.Problems) != 0 {
		t.Errorf("audit of the run's end: %+v; want no problems", rep.Audit)
	}
	const (
		maxTransactions = 600 // one handling's storage transactions, retries included (ServerBusy answers too)
		maxEntities     = 400 // one handling's table entities read
		maxPerFinal     = 32  // a ply's table entities read per final blob, where it has 500 or more
	)
	for _, p := range rep.Plies {
		if p.MaxTaskTransactions > maxTransactions || p.MaxTaskEntities > maxEntities {
			t.Errorf("ply %d: a handling made %d transactions and one read %d entities; want at most %d and %d",
				p.Ply, p.MaxTaskTransactions, p.MaxTaskEntities, maxTransactions, maxEntities)
		}
		if p.FinalBlobs >= 500 && p.EntityReads > maxPerFinal*p.FinalBlobs {
			t.Errorf("ply %d: %d entities read for %d final blobs, more than %d a blob", p.Ply, p.EntityReads, p.FinalBlobs, maxPerFinal)
		}
		t.Logf("ply %d: %d final blobs, %d handlings, %d entities read, the largest handling %d transactions and %d entities",
			p.Ply, p.FinalBlobs, p.Tasks, p.EntityReads, p.MaxTaskTransactions, p.MaxTaskEntities)
	}
	if last := rep.Plies[9]; last.FinalBlobs != 27324 || last.Positions != 434029 {
		t.Errorf("ply 9: %d final blobs of %d positions; want 27,324 of 434,029 (docs/reference.md)", last.FinalBlobs, last.Positions)
	}
}

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
)

// TestAzuriteTwoAccounts runs 8x8 through ply 10 with three worker
// processes over two storage accounts: the shared Azurite and one of the
// test's own, on other ports (both devstoreaccount1, which is fine: the
// endpoints differ). Every command reads the second account from
// AZURE_STORAGE_CONNECTION_STRING_2. The counts must be exactly the
// reference engine's (and docs/reference.md's through ply 8), the run
// must check clean, every blob must lie on the account runstore.Placement
// gives it, and the second account must hold at least a quarter of the
// bytes of the blobs the finished run keeps (every ply's final blobs and
// results; the sweeps delete the rest as the run goes, so this is what
// the run holds, not what it wrote).
func TestAzuriteTwoAccounts(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates 8x8 through ply 10")
	}
	first := azurite(t)
	bin := binaries(t)
	second := startPrivateAzurite(t)
	t.Setenv(azure.EnvName(azure.EnvConnectionString, 2), second.cs)

	run := runName("a")
	const target = 10
	// Small blobs and buckets, so ply 10 has some ten buckets to spread;
	// two queue shards, one on each account, and two partition shards.
	// Sizes double from ply 9, and the fan-in of 4 gives ply 10 a
	// combine level, whose runs spread over the accounts too.
	seeded, err := command(bin, "seed", "-run", run, "-board", "8", "-plies", fmt.Sprint(target), "-blob-positions", "20000", "-bucket-blobs", "4",
		"-grow-from", "9", "-merge-fan-in", "4", "-queue-shards", "2", "-partition-shards", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, seeded)
	}
	// Seed names every queue shard and its account, for the autoscaler.
	if want := fmt.Sprintf("work queues %s-work (account 1), %s-work-1 (account 2)\n", run, run); !strings.HasSuffix(string(seeded), want) {
		t.Errorf("seed said %q, want it to end with %q", seeded, want)
	}
	f := newFleet(t, bin, run, "-exit-when-done", "-visibility", "30s")
	for range 3 {
		f.start()
	}
	// A guard against a hung run, far beyond its time on a slow machine;
	// nothing is measured against it.
	timeout := time.After(30 * time.Minute)
	for range 3 {
		select {
		case p := <-f.exited:
			delete(f.live, p.id)
			if p.err != nil {
				f.dumpLogs()
				t.Fatalf("worker %s: %v", p.id, p.err)
			}
		case <-timeout:
			f.dumpLogs()
			t.Fatal("the workers did not finish the run")
		}
	}

	rep, out := inspectReport(t, bin, run)
	t.Logf("inspect:\n%s", out)
	// A process given only the first account is refused in one line.
	one := command(bin, "inspect", "-run", run)
	one.Env = slices.DeleteFunc(one.Env, func(kv string) bool {
		return strings.HasPrefix(kv, azure.EnvName(azure.EnvConnectionString, 2)+"=")
	})
	if out, err := one.CombinedOutput(); err == nil || !strings.Contains(string(out), "spread over 2 storage accounts, but this process has 1") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("inspect with one of the two accounts: %v\n%s", err, out)
	}
	checkClean(t, bin, run)
	if c := rep.Plies[target].Combines; c == 0 {
		t.Errorf("ply %d has no combine tasks: the run did not exercise the combine level", target)
	}
	refPath := filepath.Join(t.TempDir(), "reference.json")
	if out, err := command(bin, "enumerate", "-engine", "reference", "-board", "8", "-plies", fmt.Sprint(target), "-quiet", "-json", refPath).CombinedOutput(); err != nil {
		t.Fatalf("enumerate -engine reference: %v\n%s", err, out)
	}
	ref := readReport(t, refPath)
	if len(rep.Plies) != target+1 || len(ref.Plies) != target+1 {
		t.Fatalf("%d plies, reference %d; want %d", len(rep.Plies), len(ref.Plies), target+1)
	}
	for i, p := range rep.Plies {
		r := ref.Plies[i]
		got := [7]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws, p.Unknown}
		want := [7]int64{r.Positions, r.Terminal, r.Edges, r.BlackWins, r.WhiteWins, r.Draws, r.Unknown}
		if got != want {
			t.Errorf("ply %d: %v, reference engine %v", i, got, want)
		}
		if i < len(testkit.Ref8x8Positions) && (p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i]) {
			t.Errorf("ply %d: %d positions, %d edges; docs/reference.md %d, %d", i, p.Positions, p.Edges, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
		}
	}

	// What each account holds, listed on the account itself.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	place := runstore.Placement{Accounts: 2}
	var bytes [2]int64
	for i, cs := range []string{first, second.cs} {
		be, err := azure.Open(ctx, azure.Config{ConnectionString: cs})
		if err != nil {
			t.Fatal(err)
		}
		list, err := be.Container(pipeline.Container(run)).List(ctx, "")
		if err != nil {
			t.Fatalf("listing account %d: %v", i+1, err)
		}
		// Each account holds its shard of the work queue, empty now.
		if n, err := be.Queue(pipeline.WorkQueues(run, 2)[i]).ApproximateLength(ctx); err != nil || n != 0 {
			t.Errorf("queue shard %d on account %d: %d messages, %v", i, i+1, n, err)
		}
		for _, b := range list {
			bytes[i] += b.Size
			if a := place.Blob(b.Name); a != i {
				t.Errorf("blob %s is on account %d; its placement is account %d", b.Name, i+1, a+1)
			}
		}
		t.Logf("account %d holds %d blobs, %d bytes", i+1, len(list), bytes[i])
		// Each account holds a state table of the run: a run seeded on
		// two accounts spreads its state rows over both.
		if _, err := be.Table(pipeline.StateTables(run, 2)[i]).Query(ctx, "p00", storage.QueryOptions{}); err != nil {
			t.Errorf("state table %s on account %d: %v", pipeline.StateTables(run, 2)[i], i+1, err)
		}
		be.Close()
	}
	if total := bytes[0] + bytes[1]; 4*bytes[1] < total {
		t.Errorf("the second account holds %d of the run's %d blob bytes: less than a quarter", bytes[1], total)
	}

	// seed -delete leaves nothing of the run on either account.
	if out, err := command(bin, "seed", "-run", run, "-delete").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "run "+run+" deleted: ") {
		t.Fatalf("seed -delete: %v\n%s", err, out)
	}
	for i, cs := range []string{first, second.cs} {
		be, err := azure.Open(ctx, azure.Config{ConnectionString: cs})
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		cfg := pipeline.RunConfig{Name: run, Config: runstore.Config{QueueShards: 2, CompensationShards: 2, Accounts: 2, StateAccounts: 2}}
		if left, err := pipeline.Remains(ctx, be, cfg); err != nil || len(left) > 0 {
			t.Errorf("account %d still has %v of run %s after seed -delete (%v)", i+1, left, run, err)
		}
	}
	if out, err := command(bin, "inspect", "-run", run).CombinedOutput(); err == nil || !strings.Contains(string(out), "no run "+run) {
		t.Errorf("inspect of the deleted run: %v\n%s", err, out)
	}
}

package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage/azure"
)

// TestPlacement checks runstore.Placement, the placement openAzure gives
// a spread backend, on names made by runstore's own name functions.
func TestPlacement(t *testing.T) {
	two, three := runstore.Placement{Accounts: 2}, runstore.Placement{Accounts: 3}
	for _, tc := range []struct {
		name       string
		two, three int
	}{
		{runstore.FinalRunBlobName(10, 0, 0, "a1"), 0, 1},
		{runstore.FinalRunBlobName(10, 1, 5, "a1"), 1, 2},
		{runstore.FinalRunBlobName(10, 1, 6, "b2"), 1, 2}, // a bucket's blobs stay together
		{runstore.FinalRunBlobName(9, 1, 0, "a1"), 0, 1},
		{runstore.ResultsBlobName(10, 7), 1, 2},
		{runstore.ExpansionBlobName(3, 4, "a1"), 1, 1},
		{runstore.ExpansionBlobName(3, 5, "a1"), 0, 2},
		{runstore.PlyFolder(0) + "start", 0, 0},
		{runstore.SplittersBlobName(5), 0, 0},
		{runstore.InputsBlobName(5), 0, 0},
		{runstore.CombineBlobName(6, 3, "a1"), 1, 0},
		{runstore.CombineBlobName(6, 4, "a1"), 0, 1},
		{runstore.CombineInputsBlobName(5, 2), 0, 0},
		{"p05/f-12x456-0000-a1", 0, 0}, // not the layout: account 0
		{"p05/e-", 0, 0},
		{"settings", 0, 0},
	} {
		if got := two.Blob(tc.name); got != tc.two {
			t.Errorf("%s on two accounts: %d, want %d", tc.name, got, tc.two)
		}
		if got := three.Blob(tc.name); got != tc.three {
			t.Errorf("%s on three accounts: %d, want %d", tc.name, got, tc.three)
		}
		if got := (runstore.Placement{Accounts: 1}).Blob(tc.name); got != 0 {
			t.Errorf("%s on one account: %d", tc.name, got)
		}
	}
}

// TestTableNames: the table placement reads accounts back from exactly
// the names pipeline.StateTables and pipeline.BackTables make.
func TestTableNames(t *testing.T) {
	for _, names := range [][]string{pipeline.StateTables("run1", 5), pipeline.BackTables("run1", 5), pipeline.StateTables("backtrack9", 3), pipeline.BackTables("state7", 3)} {
		for i, name := range names {
			if got, ok := pipeline.TableAccount(name); !ok || got != i {
				t.Errorf("%s: account %d, %v; want %d", name, got, ok, i)
			}
		}
	}
	for _, name := range []string{"run1state1", "run1state02", "run1backtrack1", "run1backtrack02", "run1backtrack65", "backtrack", "state", "run1backtrackx", "run1statex"} {
		if got, ok := pipeline.TableAccount(name); ok {
			t.Errorf("%s: account %d, want none", name, got)
		}
	}
}

// TestQueueShardNames: the queue placement reads shard numbers back
// from exactly the names pipeline.WorkQueues and CompensationQueues
// make.
func TestQueueShardNames(t *testing.T) {
	for _, names := range [][]string{pipeline.WorkQueues("run1", 12), pipeline.CompensationQueues("run1", 12)} {
		for i, name := range names {
			if got, ok := pipeline.QueueShard(name); !ok || got != i {
				t.Errorf("%s: shard %d, %v; want %d", name, got, ok, i)
			}
		}
	}
	for _, name := range []string{"run1-work-poison", "run1-work-0", "run1-work-01", "run1-work-64", "run1", "-work", "run1-work-1-work-2x", "Run-work",
		"run1-compensation-0", "run1-compensation-07", "run1-compensation-64", "-compensation", "run1-compensation-x", "run1-compensations"} {
		if got, ok := pipeline.QueueShard(name); ok {
			t.Errorf("%s: shard %d, want none", name, got)
		}
	}
}

// FuzzPlacement: any name is placed on one of the accounts.
func FuzzPlacement(f *testing.F) {
	for _, s := range []string{runstore.FinalRunBlobName(10, 123456, 1, "x"), runstore.ExpansionBlobName(99, 9999999, "y"), runstore.ResultsBlobName(1, 9999999), "p00/start", "p1/e-1", ""} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, name string, n int) {
		n = 1 + abs(n)%64
		if got := (runstore.Placement{Accounts: n}).Blob(name); got < 0 || got >= n {
			t.Fatalf("%q on %d accounts: account %d", name, n, got)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestOpenAzureAccounts(t *testing.T) {
	conn := func(port int) string {
		ep := func(p int) string { return fmt.Sprintf("http://127.0.0.1:%d/devstoreaccount1", p) }
		return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + base64.StdEncoding.EncodeToString([]byte("a made-up key")) +
			";BlobEndpoint=" + ep(port) + ";QueueEndpoint=" + ep(port+1) + ";TableEndpoint=" + ep(port+2)
	}
	for _, tc := range []struct {
		what   string
		env    map[string]string
		spread bool
		err    string
	}{
		{"one account", map[string]string{azure.EnvConnectionString: conn(10000)}, false, ""},
		{"two accounts", map[string]string{azure.EnvConnectionString: conn(10000), azure.EnvConnectionString + "_2": conn(20000)}, true, ""},
		{"a gap", map[string]string{azure.EnvConnectionString: conn(10000), azure.EnvConnectionString + "_3": conn(20000)}, false, "account 2 is not"},
	} {
		be, n, err := openAzure(context.Background(), Env{Getenv: func(k string) string { return tc.env[k] }})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.what, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		if want := map[bool]int{false: 1, true: 2}[tc.spread]; n != want {
			t.Errorf("%s: %d accounts, want %d", tc.what, n, want)
		}
		be.Close()
	}
}

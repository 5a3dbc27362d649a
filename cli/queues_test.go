package cli

import (
	"testing"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestWorkQueues: seed names every work-queue shard, with its account
// when the run has several.
func TestWorkQueues(t *testing.T) {
	for _, c := range []struct {
		shards, accounts int
		want             string
	}{
		{0, 0, "work queue demo-work"},
		{1, 1, "work queue demo-work"},
		{1, 2, "work queue demo-work (account 1)"},
		{3, 1, "work queues demo-work, demo-work-1, demo-work-2"},
		{3, 2, "work queues demo-work (account 1), demo-work-1 (account 2), demo-work-2 (account 1)"},
	} {
		if got := workQueues(pipeline.RunConfig{Name: "demo", Config: runstore.Config{QueueShards: c.shards, Accounts: c.accounts}}); got != c.want {
			t.Errorf("%d shards, %d accounts: %q, want %q", c.shards, c.accounts, got, c.want)
		}
	}
}

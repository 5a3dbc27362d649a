package runstore

import (
	"context"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// TestReadConfigOfOlderRuns reads settings rows as runs seeded by earlier
// releases wrote them: without shards and accounts (before sharding) and
// without state accounts (before the state rows were spread), without
// size rules (before sizes grew: fixed sizes, one merge level), each
// read with the default that keeps such a run as it was.
func TestReadConfigOfOlderRuns(t *testing.T) {
	ctx := context.Background()
	full := Config{Board: 8, Target: 9, BlobPositions: 100, BucketBlobs: 4, Start: "", Solve: false,
		QueueShards: 2, PartitionShards: 3, Accounts: 4, StateAccounts: 4, Created: 7}
	drop := func(names ...string) storage.Entity {
		e := full.entity()
		for _, n := range names {
			delete(e.Props, n)
		}
		return e
	}
	grown := full
	grown.GrowFrom, grown.MergeFanIn = 11, 1024
	fixed := grown.entity()
	delete(fixed.Props, "GrowFrom")
	delete(fixed.Props, "MergeFanIn")
	for _, tc := range []struct {
		name string
		row  storage.Entity
		want Config
	}{
		{"today", full.entity(), full},
		{"today, growing sizes", grown.entity(), grown},
		{"before growing sizes", fixed, full},
		{"before spread state rows", drop("StateAccounts"),
			Config{Board: 8, Target: 9, BlobPositions: 100, BucketBlobs: 4, QueueShards: 2, PartitionShards: 3, Accounts: 4, StateAccounts: 1, Created: 7}},
		{"before sharding", drop("StateAccounts", "QueueShards", "PartitionShards", "Accounts"),
			Config{Board: 8, Target: 9, BlobPositions: 100, BucketBlobs: 4, QueueShards: 1, PartitionShards: 1, Accounts: 1, StateAccounts: 1, Created: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, state := openStore(t)
			if _, err := state.Add(ctx, tc.row); err != nil {
				t.Fatal(err)
			}
			got, err := ReadConfig(ctx, state)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("read %+v, want %+v", got, tc.want)
			}
		})
	}
}

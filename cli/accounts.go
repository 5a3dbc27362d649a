package cli

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/spread"
)

// openAzure opens the storage accounts that env names (see
// azure.ConfigsFromEnv), metered: one account as it is, several as one
// backend that spreads each run's blob data over them by
// runstore.Placement, the shards of its work queue round the accounts,
// and its state and backtracking rows over one table of each on each
// (pipeline.StateTables, pipeline.BackTables), metered account by
// account; n is how many.
func openAzure(ctx context.Context, env Env) (be *storage.Metered, n int, err error) {
	cfgs, err := azure.ConfigsFromEnv(env.Getenv)
	if err != nil {
		return nil, 0, err
	}
	accts := make([]storage.Backend, len(cfgs))
	for i, cfg := range cfgs {
		if accts[i], err = azure.Open(ctx, cfg); err != nil {
			return nil, 0, fmt.Errorf("opening Azure storage account %d: %w", i+1, err)
		}
	}
	if len(accts) == 1 {
		return storage.NewMetered(accts[0]), 1, nil
	}
	be, err = storage.NewMeteredAccounts(accts, spreadAccounts)
	return be, len(accts), err
}

// spreadAccounts joins a run's storage accounts into one backend (see
// openAzure).
func spreadAccounts(accts []storage.Backend) (storage.Backend, error) {
	place := runstore.Placement{Accounts: len(accts)}
	return spread.New(spread.Config{Accounts: accts, Blob: place.Blob,
		Queue: func(name string) int {
			shard, _ := pipeline.QueueShard(name)
			return shard % len(accts)
		},
		Table: func(name string) int {
			account, _ := pipeline.TableAccount(name)
			return account % len(accts)
		}})
}

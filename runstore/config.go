package runstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Config is the run's settings row, written once when the run is seeded.
// Workers read it, so they need only the run's name.
type Config struct {
	Board         int
	Target        int // target ply
	BlobPositions int // positions per final blob, at most
	BucketBlobs   int // final blobs per bucket, about
	// GrowFrom and MergeFanIn are the rest of the run's Sizes; 0 (never
	// grow, no limit) for runs seeded before they existed.
	GrowFrom   int
	MergeFanIn int
	// Start is the start position's key text (board.Position.Text), ""
	// for the board's usual start.
	Start string
	// Solve says the target ply's positions are solved exactly.
	Solve bool
	// SolvePositions caps positions per final blob at the target ply of
	// a run that solves; 0 without Solve.
	SolvePositions int
	// SolveMode says how far a run that solves solves the target ply:
	// SolveAll ("" in runs seeded before modes existed), SolveRoot or
	// SolveWLD; "" without Solve.
	SolveMode SolveMode
	// QueueShards is how many queues the work queue is spread over.
	QueueShards int
	// PartitionShards is how many partitions each kind of a ply's
	// numbered rows is spread over (New).
	PartitionShards int
	// Accounts is how many storage accounts the run's data is spread
	// over.
	Accounts int
	// StateAccounts is how many of them hold the run's state rows (New):
	// Accounts for runs seeded since those rows were spread, 1 before.
	StateAccounts int
	Created       int64
}

// Sizes are the run's size rules.
func (c Config) Sizes() Sizes {
	return Sizes{BlobPositions: c.BlobPositions, BucketBlobs: c.BucketBlobs, GrowFrom: c.GrowFrom, MergeFanIn: c.MergeFanIn}
}

// SolveMode is how far a run solves the positions of its target ply.
type SolveMode string

const (
	// SolveAll solves every position exactly: a table of exact scores.
	SolveAll SolveMode = "all"
	// SolveRoot solves each position only as far as its parents need
	// for their exact scores, so that the start's exact score is known.
	SolveRoot SolveMode = "root"
	// SolveWLD solves each position only as far as its parents need
	// for their results (win, draw or loss), so that the start's is known.
	SolveWLD SolveMode = "wld"
)

// Pruned reports whether the mode solves positions only as far as their
// parents need (root or wld).
func (m SolveMode) Pruned() bool { return m == SolveRoot || m == SolveWLD }

func (c Config) entity() storage.Entity {
	return storage.Entity{PartitionKey: pkRun, RowKey: rkConfig, Props: map[string]any{
		"Board": int64(c.Board), "Target": int64(c.Target),
		"BlobPositions": int64(c.BlobPositions), "BucketBlobs": int64(c.BucketBlobs),
		"GrowFrom": int64(c.GrowFrom), "MergeFanIn": int64(c.MergeFanIn),
		"Start": c.Start, "Solve": c.Solve, "SolvePositions": int64(c.SolvePositions), "SolveMode": string(c.SolveMode),
		"QueueShards": int64(c.QueueShards), "PartitionShards": int64(c.PartitionShards),
		"Accounts": int64(c.Accounts), "StateAccounts": int64(c.StateAccounts), "Created": c.Created,
	}}
}

// ReadConfig reads a run's settings from its state table, before a board
// (and so a Store) exists. It returns storage.ErrNotFound when the run
// has not been seeded.
func ReadConfig(ctx context.Context, state storage.Table) (Config, error) {
	e, err := state.Get(ctx, pkRun, rkConfig)
	if err != nil {
		return Config{}, err
	}
	d := decode(e, nil)
	c := Config{Board: d.count("Board"), Target: d.count("Target"), BlobPositions: d.count("BlobPositions"),
		BucketBlobs: d.count("BucketBlobs"), Created: d.int("Created")}
	// Runs seeded before -start and -solve existed lack them.
	if d.optional("Start") {
		c.Start, c.Solve = d.str("Start"), d.bool("Solve")
	}
	// Runs seeded before SolvePositions existed cut every blob at
	// BlobPositions.
	if d.optional("SolvePositions") {
		c.SolvePositions = d.count("SolvePositions")
	} else if c.Solve {
		c.SolvePositions = c.BlobPositions
	}
	// Runs seeded before solve modes existed solve every position.
	if d.optional("SolveMode") {
		c.SolveMode = SolveMode(d.str("SolveMode"))
	}
	if c.Solve && c.SolveMode == "" {
		c.SolveMode = SolveAll
	}
	// Runs seeded before sharding have one queue, one partition of each
	// kind and one account.
	c.QueueShards, c.PartitionShards, c.Accounts = 1, 1, 1
	if d.optional("QueueShards") {
		c.QueueShards, c.PartitionShards, c.Accounts = d.count("QueueShards"), d.count("PartitionShards"), d.count("Accounts")
	}
	// Runs seeded before the state rows were spread keep them all on the
	// first account.
	c.StateAccounts = 1
	if d.optional("StateAccounts") {
		c.StateAccounts = d.count("StateAccounts")
	}
	// Runs seeded before the sizes grew keep them fixed, in one merge
	// level.
	if d.optional("GrowFrom") {
		c.GrowFrom, c.MergeFanIn = d.count("GrowFrom"), d.count("MergeFanIn")
	}
	return c, d.done("the run's settings")
}

// AddConfig records a run's settings. If the run already has settings,
// it returns them and storage.ErrExists.
func AddConfig(ctx context.Context, state storage.Table, c Config) (Config, error) {
	_, err := state.Add(ctx, c.entity())
	if errors.Is(err, storage.ErrExists) {
		have, rerr := ReadConfig(ctx, state)
		if rerr != nil {
			return Config{}, rerr
		}
		return have, err
	}
	if err != nil {
		return Config{}, fmt.Errorf("recording the run's settings: %w", err)
	}
	return c, nil
}

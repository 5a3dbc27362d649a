package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestRunConfigRecord: a seeded run opens with the configuration it was
// seeded with, for the usual start and another. (runstore's
// TestConfigRoundTrip checks that every setting is recorded.)
func TestRunConfigRecord(t *testing.T) {
	ctx := context.Background()
	start, err := board.MustNew(6).ParseMoves(sixStart)
	if err != nil {
		t.Fatal(err)
	}
	usual := RunConfig{Name: "usual", Config: runstore.Config{Board: 6, Target: 5}}
	custom := RunConfig{Name: "custom", Config: runstore.Config{Board: 6, Target: 4,
		Sizes: runstore.Sizes{BlobPositions: 500, BucketBlobs: 3, GrowFrom: 3, MergeFanIn: 8},
		Start: start, Solve: true, SolvePositions: 16, QueueShards: 2, PartitionShards: 3, Accounts: 2}}
	for _, cfg := range []RunConfig{usual, custom} {
		be := openEmbedded(t)
		if _, err := Seed(ctx, be, cfg); err != nil {
			t.Fatalf("%s: %v", cfg.Name, err)
		}
		r, err := OpenRun(ctx, be, cfg.Name)
		if err != nil {
			t.Fatalf("%s: opening: %v", cfg.Name, err)
		}
		if want := cfg.WithDefaults(); r.Config != want {
			t.Errorf("%s: opened as %+v, want %+v", cfg.Name, r.Config, want)
		}
	}
}

// TestRunConfigRecordBad: a settings row that no configuration could have
// written is an error, not a run.
func TestRunConfigRecordBad(t *testing.T) {
	ctx := context.Background()
	be := openEmbedded(t)
	bad := RunConfig{Name: "bad", Config: runstore.Config{Board: 6, Target: 4}}.WithDefaults()
	bad.Target = 40
	state := be.Table(StateTable(bad.Name))
	if err := state.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := runstore.AddConfig(ctx, state, bad.Config, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRun(ctx, be, bad.Name); err == nil || !strings.Contains(err.Error(), "bad recorded configuration") {
		t.Errorf("opening a run recorded with target ply 40 on 6x6: %v, want a bad recorded configuration", err)
	}
}

// TestConfigDefaults: WithDefaults fills a zero field with
// DefaultRunConfig's value only where zero is no setting, so the zero
// RunConfig is not the defaults (fixed sizes, no fan-in limit), and
// DefaultRunConfig is: completing it with WithDefaults or WithDerived
// gives the same run.
func TestConfigDefaults(t *testing.T) {
	d := DefaultRunConfig()
	for _, tc := range []struct {
		name string
		got  RunConfig
		want func(c *RunConfig)
	}{
		{"zero", RunConfig{}.WithDefaults(), func(c *RunConfig) {
			c.Start, c.Target, c.StateAccounts = board.MustNew(8).Start(), 0, 1
			c.GrowFrom, c.MergeFanIn = 0, 0
		}},
		{"defaults", d.WithDefaults(), func(c *RunConfig) { c.Start, c.Target, c.StateAccounts = board.MustNew(8).Start(), 9, 1 }},
		{"defaults derived", d.WithDerived(), func(c *RunConfig) { c.Start, c.Target, c.StateAccounts = board.MustNew(8).Start(), 9, 1 }},
		{"4x4, auto target", RunConfig{Config: runstore.Config{Board: 4, Target: AutoTarget}}.WithDefaults(), func(c *RunConfig) {
			c.Board, c.Start, c.Target, c.StateAccounts = 4, board.MustNew(4).Start(), 12, 1
			c.GrowFrom, c.MergeFanIn = 0, 0
		}},
		{"solving, pruned", RunConfig{Config: runstore.Config{Solve: true, SolveMode: runstore.SolveRoot, Accounts: 3}}.WithDefaults(), func(c *RunConfig) {
			c.Start, c.Target, c.Accounts, c.StateAccounts = board.MustNew(8).Start(), 0, 3, 3
			c.GrowFrom, c.MergeFanIn = 0, 0
			c.Solve, c.SolveMode, c.SolvePositions = true, runstore.SolveRoot, DefaultPrunedSolvePositions
		}},
	} {
		want := d
		want.CompensationShards = want.QueueShards // derived: as many as the work queue's
		want.Messages = runstore.MessagesScanNodes // derived: the forms of a run seeded now
		want.Completion = runstore.TreeCompletion  // derived: the tree of a run seeded now
		tc.want(&want)
		if tc.got != want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.got, want)
		}
	}
}

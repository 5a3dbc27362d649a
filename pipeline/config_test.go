package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
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
		be := teststore.Embedded(t)
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
	be := teststore.Embedded(t)
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

// TestValidateNamesTheSetting: each refused setting comes back as a
// SettingError naming it, its value and its rule, which commands turn
// into their flags' names.
func TestValidateNamesTheSetting(t *testing.T) {
	for _, tc := range []struct {
		change func(*RunConfig)
		want   Setting
		text   string
	}{
		{func(c *RunConfig) { c.Board = 5 }, SettingBoard, "board 5: must be 4, 6 or 8"},
		{func(c *RunConfig) { c.Target = -1 }, SettingTarget, "target ply -1: must be 0 to 60 on 8x8 from the start position"},
		{func(c *RunConfig) { c.BlobPositions = 0 }, SettingBlobPositions, "blob positions 0: must be 1 to 4194304"},
		{func(c *RunConfig) { c.BucketBlobs = MaxBucketBlobs + 1 }, SettingBucketBlobs, "bucket blobs 1025: must be 1 to 1024"},
		{func(c *RunConfig) { c.GrowFrom = -1 }, SettingGrowFrom, "grow from ply -1: must be 1 to 99, or 0 for never"},
		{func(c *RunConfig) { c.MergeFanIn = 1 }, SettingMergeFanIn, "merge fan-in 1: must be 2 to 4096, or 0 for no limit"},
		{func(c *RunConfig) { c.QueueShards = 0 }, SettingQueueShards, "queue shards 0: must be 1 to 64"},
		{func(c *RunConfig) { c.PartitionShards = 0 }, SettingPartitionShards, "partition shards 0: must be 1 to"},
		{func(c *RunConfig) { c.Completion = "round" }, SettingCompletion, `completion "round": must be`},
		{func(c *RunConfig) { c.SolvePositions = 8 }, SettingSolvePositions, "solve positions 8: only a run that solves has them"},
		{func(c *RunConfig) { c.SolveMode = runstore.SolveAll }, SettingSolveMode, "solve mode all: only a run that solves has one"},
		{func(c *RunConfig) { c.Solve, c.SolvePositions, c.SolveMode = true, 8, "most" }, SettingSolveMode, `solve mode "most": must be all, root or wld`},
	} {
		cfg := DefaultRunConfig()
		cfg.Name, cfg.Target = "valid", 10
		cfg = cfg.WithDerived()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("the valid configuration: %v", err)
		}
		tc.change(&cfg)
		err := cfg.Validate()
		se, ok := err.(*SettingError)
		if !ok || se.Setting != tc.want || !strings.HasPrefix(err.Error(), tc.text) {
			t.Errorf("%s: Validate = %v (%T), want a SettingError of %q starting %q", tc.want, err, err, tc.want, tc.text)
		}
	}
}

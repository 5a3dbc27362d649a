package runstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Config is a run's settings: the one row, written once when the run is
// seeded, that workers read so that they need only the run's name. Every
// field is recorded (see TestConfigRoundTrip); the row also holds its
// version (configSchema) and when it was written.
type Config struct {
	Board  int // the board's size: 4, 6 or 8
	Target int // target ply
	// Sizes size every ply's final blobs, buckets and merge levels.
	Sizes
	// Start is the position the run starts from, ply 0: plies count discs
	// placed since it. The row records the board's usual start as "", as
	// runs seeded before -start existed did.
	Start board.Position
	// Solve says the target ply's positions are solved exactly (package
	// solve), so that exact scores flow back to the start.
	Solve bool
	// SolvePositions caps positions per final blob at the target ply of a
	// run that solves, so that the solving is many small tasks; 0 without
	// Solve.
	SolvePositions int
	// SolveMode says how far a run that solves solves the target ply;
	// "" without Solve.
	SolveMode SolveMode
	// QueueShards is how many queues the work queue is spread over.
	QueueShards int
	// CompensationShards is how many queues the compensation messages
	// are spread over: as many as the work queue's for runs seeded now,
	// one for runs seeded before the settings row's version 3.
	CompensationShards int
	// PartitionShards is how many partitions each kind of a ply's
	// numbered rows is spread over (New).
	PartitionShards int
	// Accounts is how many storage accounts the run's data is spread
	// over; every process of the run must open as many.
	Accounts int
	// StateAccounts is how many of them hold the run's state rows (New).
	StateAccounts int
	// Completion is how the run's stages count their done items
	// (completion.go): a tree of fan-out 8 for every run seeded now, of
	// 64 for runs seeded with versions 2 to 4 of the settings row, flat
	// for runs seeded before.
	Completion Completion
	// Messages is the forms of work message the run's workers send
	// (MessagesScanNodes for every run seeded now, MessagesNamed for runs
	// seeded before it, MessagesUnnamed for runs seeded before the
	// settings row's version 4). A release reads only
	// the settings rows of the versions it knows, so the workers of a
	// run seeded now are all of releases that read every form it sends;
	// a run seeded before may have workers of earlier releases too,
	// which would refuse an R message that names its blob as bad and
	// mishandle a compensation message that covers all the outputs of a
	// merge. A release that knows forms up to MessagesNamed refuses the
	// settings of a run seeded with MessagesScanNodes (Known), so that no
	// worker of it poisons a scan message that names a node.
	Messages Messages
}

// Messages names the forms of work message a run's workers send.
type Messages int

const (
	// MessagesUnnamed: R messages name a final blob by its index alone,
	// and a merge covers each output with a compensation message.
	MessagesUnnamed Messages = 1
	// MessagesNamed: R messages name their final blob's blob too, and a
	// merge attempt's outputs share one compensation message
	// (MergeOutputsName).
	MessagesNamed Messages = 2
	// MessagesScanNodes: MessagesNamed, and a scan message may name a
	// node of a tree of scans (S<ply>-<node>), each of which covers a
	// bounded span of a step's tasks (dedup's scan).
	MessagesScanNodes Messages = 3
)

// Known reports whether m is a form this release sends.
func (m Messages) Known() bool { return m >= MessagesUnnamed && m <= MessagesScanNodes }

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

// configSchema is the settings row's version and its migrations
// (schema). Version 1 is the first that records its version; version 2
// records how the run counts its stages' items (Completion); version 3
// how many queues hold its compensation messages (CompensationShards);
// version 4 the forms of work message its workers send (Messages);
// version 5 names the completion tree's fan-out (Completion).
var configSchema = schema{
	0: configFromUnversioned,
	1: configFromV1,
	2: configFromV2,
	3: configFromV3,
	4: configFromV4,
}

// configFromV4 brings a settings row of version 4 to version 5: its
// Completion "", the tree of the releases before, is a tree of fan-out
// 64. A release before version 5 refuses the rows of runs seeded now,
// whose trees it would read with the wrong fan-out.
func configFromV4(props map[string]any) error {
	if c, err := storage.PropString(storage.Entity{Props: props}, "Completion"); err == nil && c == "" {
		props["Completion"] = string(WideTreeCompletion)
	}
	return nil
}

// configFromV3 brings a settings row of version 3 to version 4: a run
// seeded before version 4 may have workers of the releases before, which
// read only the unnamed forms.
func configFromV3(props map[string]any) error {
	props["Messages"] = int64(MessagesUnnamed)
	return nil
}

// configFromV2 brings a settings row of version 2 to version 3: a run
// seeded before version 3 has its compensation messages on one queue.
func configFromV2(props map[string]any) error {
	props["CompensationShards"] = int64(1)
	return nil
}

// configFromV1 brings a settings row of version 1 to version 2: a run
// seeded before version 2 has its stages counted flat, and its stages
// under way have their group markers where the flat count reads them,
// so it goes on counting so.
func configFromV1(props map[string]any) error {
	props["Completion"] = string(FlatCompletion)
	return nil
}

// configFromUnversioned brings a settings row of version 0 to version 1. Version 0 is
// six generations of rows, each written before some properties existed;
// the generation shows only in which properties a row lacks, so each
// gap is filled on its own, as a row lacking it was always read.
func configFromUnversioned(props map[string]any) error {
	absent := func(name string) bool { _, ok := props[name]; return !ok }
	row := storage.Entity{Props: props}
	// Before -start and -solve: the usual start, no solving.
	if absent("Start") {
		props["Start"], props["Solve"] = "", false
	}
	solve, err := storage.PropBool(row, "Solve")
	if err != nil {
		return err
	}
	// Before SolvePositions: a run that solves cut every blob at
	// BlobPositions.
	if absent("SolvePositions") {
		props["SolvePositions"] = int64(0)
		if solve {
			props["SolvePositions"] = props["BlobPositions"]
		}
	}
	// Before solve modes: a run that solves solves every position.
	if absent("SolveMode") {
		props["SolveMode"] = ""
	}
	if mode, err := storage.PropString(row, "SolveMode"); err == nil && solve && mode == "" {
		props["SolveMode"] = string(SolveAll)
	}
	// Before sharding: one queue, one partition of each kind and one
	// account.
	if absent("QueueShards") {
		props["QueueShards"], props["PartitionShards"], props["Accounts"] = int64(1), int64(1), int64(1)
	}
	// Before the state rows were spread: all on the first account.
	if absent("StateAccounts") {
		props["StateAccounts"] = int64(1)
	}
	// Before the sizes grew: fixed sizes, one merge level.
	if absent("GrowFrom") {
		props["GrowFrom"], props["MergeFanIn"] = int64(0), int64(0)
	}
	return nil
}

// entity is the row that records c, written at created.
func (c Config) entity(created time.Time) (storage.Entity, error) {
	b, err := board.New(c.Board)
	if err != nil {
		return storage.Entity{}, err
	}
	start := ""
	if c.Start != b.Start() {
		start = c.Start.Text()
	}
	return storage.Entity{PartitionKey: pkRun, RowKey: rkConfig, Props: configSchema.stamp(map[string]any{
		"Board": int64(c.Board), "Target": int64(c.Target),
		"BlobPositions": int64(c.BlobPositions), "BucketBlobs": int64(c.BucketBlobs),
		"GrowFrom": int64(c.GrowFrom), "MergeFanIn": int64(c.MergeFanIn),
		"Start": start, "Solve": c.Solve, "SolvePositions": int64(c.SolvePositions), "SolveMode": string(c.SolveMode),
		"QueueShards": int64(c.QueueShards), "CompensationShards": int64(c.CompensationShards), "PartitionShards": int64(c.PartitionShards),
		"Accounts": int64(c.Accounts), "StateAccounts": int64(c.StateAccounts), "Completion": string(c.Completion.orCurrent()),
		"Messages": int64(c.Messages), "Created": created.UnixNano(),
	})}, nil
}

// decodeConfig reads a settings row of any version that configSchema
// knows.
func decodeConfig(e storage.Entity) (Config, error) {
	e, err := configSchema.upgrade(e, "the run's settings row")
	if err != nil {
		return Config{}, err
	}
	d := decode(e, nil)
	c := Config{Board: d.count("Board"), Target: d.count("Target"),
		Sizes: NewSizes(d.count("BlobPositions"), d.count("BucketBlobs"), d.count("GrowFrom"), d.count("MergeFanIn")),
		Solve: d.bool("Solve"), SolvePositions: d.count("SolvePositions"), SolveMode: SolveMode(d.str("SolveMode")),
		QueueShards: d.count("QueueShards"), CompensationShards: d.count("CompensationShards"), PartitionShards: d.count("PartitionShards"),
		Accounts: d.count("Accounts"), StateAccounts: d.count("StateAccounts"), Completion: Completion(d.str("Completion")),
		Messages: Messages(d.count("Messages"))}
	if !c.Completion.Known() {
		d.fail(fmt.Errorf("completion %q: not %q, %q or %q", c.Completion, TreeCompletion, WideTreeCompletion, FlatCompletion))
	}
	if !c.Messages.Known() {
		d.fail(fmt.Errorf("messages %d: not %d to %d", c.Messages, MessagesUnnamed, MessagesScanNodes))
	}
	d.int("Created") // no setting, but every row has it
	c.Start = d.start(c.Board)
	return c, d.done("the run's settings")
}

// start reads the Start property of a settings row on a board of size
// n: "" is the board's usual start.
func (d *decoder) start(n int) board.Position {
	text := d.str("Start")
	if d.err != nil {
		return board.Position{}
	}
	b, err := board.New(n)
	if err != nil {
		d.fail(fmt.Errorf("board %d: %w", n, err))
		return board.Position{}
	}
	if text == "" {
		return b.Start()
	}
	p, err := b.ParseText(text)
	if err != nil {
		d.fail(fmt.Errorf("start position: %w", err))
	}
	return p
}

// ReadConfig reads a run's settings from its state table, before a
// Store exists, migrating a row of an earlier version (configSchema).
// It returns storage.ErrNotFound when the run has not been seeded.
func ReadConfig(ctx context.Context, state storage.Table) (Config, error) {
	e, err := state.Get(ctx, pkRun, rkConfig)
	if err != nil {
		return Config{}, err
	}
	return decodeConfig(e)
}

// AddConfig records a run's settings, written at created. If the run
// already has settings, it returns them and storage.ErrExists.
func AddConfig(ctx context.Context, state storage.Table, c Config, created time.Time) (Config, error) {
	e, err := c.entity(created)
	if err != nil {
		return Config{}, fmt.Errorf("recording the run's settings: %w", err)
	}
	_, err = state.Add(ctx, e)
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

// Package pipeline is the distributed enumeration: stateless workers that
// expand positions ply by ply, remove duplicates by merging sorted runs
// whose key ranges overlap, and propagate results back to the start. They
// coordinate only through storage (see ../README.md for the message flow).
package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Defaults for a run's tuning.
const (
	// DefaultBlobPositions caps positions per final blob. The article uses
	// 1000; the number of merge reads grows with (positions/blob size)^2
	// per ply, so storage transactions per edge stay low only with larger
	// blobs. 1000 is still accepted for small experiments.
	DefaultBlobPositions = 1 << 16
	// DefaultBucketBlobs is the size of a bucket, in final blobs: each
	// bucket is merged by one task in one round, reading its segment of
	// every expansion blob. Larger buckets mean fewer merge tasks and
	// shorter expansion markers (one cut per bucket), smaller ones shorter
	// tasks and less memory per merge.
	DefaultBucketBlobs = 16
	// MaxBucketBlobs bounds the bucket size.
	MaxBucketBlobs = 1024
	// DefaultGrowFrom is the first ply whose final blobs double in size
	// (runstore.Sizes; buckets follow a ply later): from ply 11 on, 8x8's
	// plies are large enough that fixed sizes make merge reads grow
	// faster than the edges.
	DefaultGrowFrom = 11
	// DefaultMergeFanIn is the most expansion runs a bucket merge reads
	// before the ply gets a combine level (runstore.Sizes.Levels). Each
	// reader holds up to two blocks of about 72 KiB.
	DefaultMergeFanIn = 1024
	// MaxMergeFanIn bounds it: at 4096 runs (8192 in wide buckets), a
	// merge's readers alone hold 300 to 600 MB.
	MaxMergeFanIn = 4096
	// DefaultSolvePositions caps positions per final blob of the target
	// ply of a run that solves. Each of those blobs is one resolve task
	// that solves its positions one after another, and solving takes
	// milliseconds to minutes a position where merging takes
	// microseconds: small blobs spread the solving over every worker.
	DefaultSolvePositions = 64
	// DefaultPrunedSolvePositions is DefaultSolvePositions for the solve
	// modes root and wld, where a blob's task prunes its positions by
	// what the blob's other positions and the blobs being solved at the
	// same time have shown: fewer, larger blobs prune far more (FFO #45
	// three plies in: 27 s of CPU in one blob, 44 s in two, 101 s in
	// seventeen of 64), so a blob holds about what a worker should solve.
	DefaultPrunedSolvePositions = 512
	// MaxQueueShards bounds the work queue's shards: 64 queues take
	// 128,000 messages a second at Azure's target of 2,000 a queue, more
	// than one storage account serves (20,000 requests a second).
	MaxQueueShards = 64
	// MaxPartitionShards bounds the partitions a ply's numbered rows are
	// spread over (runstore.New).
	MaxPartitionShards = 64
)

// RunConfig is a run's name and its settings, which the run records
// (runstore.Config) so that workers need only its name.
//
// A field left zero takes its default in WithDefaults, but where zero is
// itself a setting: Target 0 (the start alone), GrowFrom 0 (fixed sizes)
// and MergeFanIn 0 (no limit). So the zero RunConfig is not the
// defaults: DefaultRunConfig is, and the commands' flags start from it.
type RunConfig struct {
	Name string
	runstore.Config
}

// AutoTarget as RunConfig.Target asks WithDefaults for DefaultTarget's
// ply, from the board and the start position.
const AutoTarget = -1

// DefaultRunConfig is the configuration of a run given nothing but its
// name: the one definition of the defaults, which the flags of seed and
// enumerate show and start from.
func DefaultRunConfig() RunConfig {
	return RunConfig{Config: runstore.Config{Board: 8, Target: AutoTarget,
		Sizes:       runstore.NewSizes(DefaultBlobPositions, DefaultBucketBlobs, DefaultGrowFrom, DefaultMergeFanIn),
		QueueShards: 1, PartitionShards: 1, Accounts: 1}}
}

// DefaultTarget is the target ply when none is given: the end of the game
// on 4x4 and ply 9 on larger boards.
func DefaultTarget(size int) int {
	if size == 4 {
		return 12
	}
	return 9
}

// WithDefaults fills the fields left zero that have DefaultRunConfig's
// value when zero is no setting of theirs (the board, the blob and
// bucket sizes, the shards and the accounts), then what WithDerived
// fills.
func (c RunConfig) WithDefaults() RunConfig {
	d := DefaultRunConfig()
	for _, f := range []struct {
		field *int
		def   int
	}{
		{&c.Board, d.Board}, {&c.BlobPositions, d.BlobPositions}, {&c.BucketBlobs, d.BucketBlobs},
		{&c.QueueShards, d.QueueShards}, {&c.PartitionShards, d.PartitionShards}, {&c.Accounts, d.Accounts},
	} {
		if *f.field == 0 {
			*f.field = f.def
		}
	}
	return c.WithDerived()
}

// OnAccounts is c on n storage accounts, with its state rows spread
// over all of them (the default; see StateAccounts). Settings derived
// before the accounts were known kept state rows on one.
func (c RunConfig) OnAccounts(n int) RunConfig {
	c.Accounts, c.StateAccounts = n, n
	return c
}

// WithDerived fills the settings that follow from others, where they are
// left unset: the zero start is the board's usual start, a Target of
// AutoTarget DefaultTarget's ply (or the last ply from the start, if
// sooner), zero state accounts all the accounts, and a run that solves
// gets SolveAll and, with no solve positions, DefaultSolvePositions
// (DefaultPrunedSolvePositions for a pruned mode), within its blob
// positions. A start whose side to move has no move but whose opponent
// has passes at once, as every position of a run does.
//
// The commands call it alone: their flags hold the defaults already, and
// a zero typed on the command line must be refused, not replaced.
func (c RunConfig) WithDerived() RunConfig {
	b, err := board.New(c.Board)
	if err == nil && c.Start == (board.Position{}) {
		c.Start = b.Start()
	}
	if err == nil && b.Moves(c.Start) == 0 && !b.Terminal(c.Start) {
		c.Start.Side = c.Start.Side.Opponent()
	}
	if c.Target == AutoTarget {
		c.Target = DefaultTarget(c.Board)
		if err == nil {
			c.Target = min(c.Target, c.origin(b).LastPly())
		}
	}
	if c.StateAccounts == 0 {
		c.StateAccounts = c.Accounts
	}
	// Every task's compensation messages are enqueued and deleted, and
	// idle workers poll for them: the queue carries about as much as the
	// work queue, so it gets as many shards.
	if c.CompensationShards == 0 {
		c.CompensationShards = c.QueueShards
	}
	if c.Messages == 0 {
		c.Messages = runstore.MessagesScanNodes
	}
	if c.Completion == "" {
		c.Completion = runstore.TreeCompletion
	}
	if c.Solve && c.SolveMode == "" {
		c.SolveMode = runstore.SolveAll
	}
	if c.Solve && c.SolvePositions == 0 {
		c.SolvePositions = min(DefaultSolvePositions, c.BlobPositions)
		if c.SolveMode.Pruned() {
			c.SolvePositions = min(DefaultPrunedSolvePositions, c.BlobPositions)
		}
	}
	return c
}

// Validate checks a complete configuration.
func (c RunConfig) Validate() error {
	if err := ValidRunName(c.Name); err != nil {
		return err
	}
	b, err := board.New(c.Board)
	if err != nil {
		return settingErrorf(SettingBoard, c.Board, "must be 4, 6 or 8")
	}
	if err := b.Valid(c.Start); err != nil {
		return fmt.Errorf("start position: %w", err)
	}
	if max := c.origin(b).LastPly(); c.Target < 0 || c.Target > max {
		return settingErrorf(SettingTarget, c.Target, "must be 0 to %d on %dx%d from the start position", max, c.Board, c.Board)
	}
	if c.Target > 99 {
		return settingErrorf(SettingTarget, c.Target, "must be at most 99")
	}
	if c.BlobPositions < 1 || c.BlobPositions > 1<<22 {
		return settingErrorf(SettingBlobPositions, c.BlobPositions, "must be 1 to %d", 1<<22)
	}
	if c.BucketBlobs < 1 || c.BucketBlobs > MaxBucketBlobs {
		return settingErrorf(SettingBucketBlobs, c.BucketBlobs, "must be 1 to %d", MaxBucketBlobs)
	}
	if c.GrowFrom < 0 || c.GrowFrom > 99 {
		return settingErrorf(SettingGrowFrom, c.GrowFrom, "must be 1 to 99, or 0 for never")
	}
	if c.MergeFanIn != 0 && (c.MergeFanIn < 2 || c.MergeFanIn > MaxMergeFanIn) {
		return settingErrorf(SettingMergeFanIn, c.MergeFanIn, "must be 2 to %d, or 0 for no limit", MaxMergeFanIn)
	}
	if c.QueueShards < 1 || c.QueueShards > MaxQueueShards {
		return settingErrorf(SettingQueueShards, c.QueueShards, "must be 1 to %d", MaxQueueShards)
	}
	if c.Completion != "" && !c.Completion.Known() {
		return settingErrorf(SettingCompletion, strconv.Quote(string(c.Completion)), "must be %q, %q or %q, or empty for the current tree", runstore.TreeCompletion, runstore.WideTreeCompletion, runstore.FlatCompletion)
	}
	if c.Messages != 0 && !c.Messages.Known() {
		return settingErrorf(SettingMessages, c.Messages, "must be %d to %d, or 0 for the current forms", runstore.MessagesUnnamed, runstore.MessagesScanNodes)
	}
	if c.CompensationShards < 0 || c.CompensationShards > MaxQueueShards {
		return settingErrorf(SettingCompensationShards, c.CompensationShards, "must be 1 to %d, or 0 for as many as the work queue's", MaxQueueShards)
	}
	if c.PartitionShards < 1 || c.PartitionShards > MaxPartitionShards {
		return settingErrorf(SettingPartitionShards, c.PartitionShards, "must be 1 to %d", MaxPartitionShards)
	}
	if c.Accounts < 1 || c.Accounts > storage.MaxAccounts {
		return settingErrorf(SettingAccounts, c.Accounts, "must be 1 to %d", storage.MaxAccounts)
	}
	if c.StateAccounts < 1 || c.StateAccounts > c.Accounts {
		return settingErrorf(SettingStateAccounts, c.StateAccounts, "must be 1 to the storage accounts, %d", c.Accounts)
	}
	switch {
	case !c.Solve && c.SolvePositions != 0:
		return settingErrorf(SettingSolvePositions, c.SolvePositions, "only a run that solves has them")
	case c.Solve && (c.SolvePositions < 1 || c.SolvePositions > c.BlobPositions):
		return settingErrorf(SettingSolvePositions, c.SolvePositions, "must be 1 to the blob positions, %d", c.BlobPositions)
	case !c.Solve && c.SolveMode != "":
		return settingErrorf(SettingSolveMode, c.SolveMode, "only a run that solves has one")
	case c.Solve && c.SolveMode != runstore.SolveAll && !c.SolveMode.Pruned():
		return settingErrorf(SettingSolveMode, strconv.Quote(string(c.SolveMode)), "must be all, root or wld")
	}
	return nil
}

func (c RunConfig) origin(b *board.Board) message.Origin {
	return message.Origin{Board: b, Start: c.Start}
}

// ValidRunName checks a run name: 3 to 32 lowercase letters and digits,
// starting with a letter, so every derived queue, container and table name
// is valid on Azure.
func ValidRunName(name string) error {
	if len(name) < 3 || len(name) > 32 {
		return fmt.Errorf("run name %q: must be 3 to 32 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("run name %q: lowercase letters and digits only, starting with a letter", name)
		}
	}
	return nil
}

// Names of a run's resources, all derived from the run name so that runs
// sharing one account never touch each other.
func WorkQueue(run string) string   { return run + "-work" }
func PoisonQueue(run string) string { return run + "-work-poison" }

// CompensationQueue names the queue of a run's compensation messages.
// They wait hidden for minutes by design; on a queue of their own, the
// work queue's whole length (visible and in flight) is the work waiting
// or under way, which an autoscaler may count (deploy/keda.yaml). Runs
// seeded with several compensation shards (CompensationQueues) have
// this as their first.
func CompensationQueue(run string) string { return run + "-compensation" }
func Container(run string) string         { return run }
func StateTable(run string) string        { return run + "state" }
func BackTable(run string) string         { return run + "backtrack" }

// StateTables and BackTables name a run's state and backtracking tables,
// one per storage account: StateTable (or BackTable), then StateTable2,
// StateTable3 and so on.
func StateTables(run string, accounts int) []string { return numbered(StateTable(run), accounts) }
func BackTables(run string, accounts int) []string  { return numbered(BackTable(run), accounts) }

// numbered is name, then name2 to name<accounts>.
func numbered(name string, accounts int) []string {
	names := []string{name}
	for i := 2; i <= accounts; i++ {
		names = append(names, fmt.Sprintf("%s%d", name, i))
	}
	return names
}

// TableAccount is the account, counted from 0, of a name that
// StateTables or BackTables makes (a name ending in N on account N-1);
// ok is false for other names.
func TableAccount(name string) (account int, ok bool) {
	i, kind := strings.LastIndex(name, "backtrack"), "backtrack"
	if j := strings.LastIndex(name, "state"); j > i {
		i, kind = j, "state"
	}
	if i <= 0 {
		return 0, false
	}
	digits := name[i+len(kind):]
	if digits == "" {
		return 0, true
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 2 || n > storage.MaxAccounts || digits != strconv.Itoa(n) {
		return 0, false
	}
	return n - 1, true
}

// QueueShard is the shard number of the name of a work or compensation
// queue shard (see WorkQueues and CompensationQueues), which puts shard
// i on storage account i mod the number of accounts; ok is false for
// any other name.
func QueueShard(name string) (shard int, ok bool) {
	for _, kind := range []string{"-work", "-compensation"} {
		if strings.HasSuffix(name, kind) {
			return 0, ValidRunName(strings.TrimSuffix(name, kind)) == nil
		}
		i := strings.LastIndex(name, kind+"-")
		if i < 0 || ValidRunName(name[:i]) != nil {
			continue
		}
		n, err := strconv.Atoi(name[i+len(kind)+1:])
		if err != nil || n < 1 || n >= MaxQueueShards || name != fmt.Sprintf("%s%s-%d", name[:i], kind, n) {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// WorkQueues names the shards of a run's work queue: WorkQueue, then
// WorkQueue-1, WorkQueue-2 and so on, so a run of one shard has the one
// queue WorkQueue.
func WorkQueues(run string, shards int) []string { return shardNames(WorkQueue(run), shards) }

// CompensationQueues names the shards of a run's compensation queue, as
// WorkQueues does the work queue's.
func CompensationQueues(run string, shards int) []string {
	return shardNames(CompensationQueue(run), shards)
}

// CompensationQueueNames names the shards of the compensation queue of
// the run of c: as many as CompensationShards, one where it is 0 (the
// runs seeded before the compensation queue had shards of its own).
func (c RunConfig) CompensationQueueNames() []string {
	return CompensationQueues(c.Name, max(1, c.CompensationShards))
}

// TableNames names the tables of the run of c: its state tables, on the
// first StateAccounts accounts, and its backtracking tables, on every
// account.
func (c RunConfig) TableNames() (state, back []string) {
	return StateTables(c.Name, c.StateAccounts), BackTables(c.Name, c.Accounts)
}

// shardNames is name, then name-1 to name-(shards-1).
func shardNames(name string, shards int) []string {
	names := []string{name}
	for i := 1; i < shards; i++ {
		names = append(names, fmt.Sprintf("%s-%d", name, i))
	}
	return names
}

// WorkerConfig tunes one worker loop.
type WorkerConfig struct {
	// Visibility is the queue visibility timeout; long tasks extend it.
	Visibility time.Duration
	// CompensationDelay is the initial visibility delay of compensation
	// messages: a few times Visibility.
	CompensationDelay time.Duration
	// MaxDequeue moves a message to the poison queue once it has been
	// dequeued more than this many times.
	MaxDequeue int64
	// PollMin and PollMax bound the idle back-off between empty dequeues.
	PollMin, PollMax time.Duration
	// ExitWhenDone stops the loop once the run is complete.
	ExitWhenDone bool
	// Drain, with ExitWhenDone, also waits for the work queue to empty:
	// compensation messages of tasks that crashed or ran late surface only
	// after their delay, and must be handled for their blobs to go.
	Drain bool
	// ThrottleRetries is how many times a task that storage throttled
	// (storage.ErrThrottled) is run again, under its lease, before it
	// fails as any other; ThrottleDelay is the first wait before a rerun,
	// doubled for each later one (see retryThrottled). Zero means
	// DefaultWorkerConfig's; NoThrottleRetries asks for none.
	ThrottleRetries int
	ThrottleDelay   time.Duration
	// Observer, if set, is told about every message handled (metrics).
	Observer Observer
	// Clock is the time of leases and of tasks (their compensation
	// deadlines); nil means the system's. Tests drive it.
	Clock Clock
}

// NoThrottleRetries as WorkerConfig.ThrottleRetries fails a throttled
// task at once, as any other failure (zero there means the default).
const NoThrottleRetries = -1

// The most WorkerConfig's throttle settings may be: the waits before a
// task's reruns double, so that 20 from a second add up to 12 days.
const (
	MaxThrottleRetries = 20
	MaxThrottleDelay   = time.Minute
)

// DefaultWorkerConfig is a worker loop's tuning given nothing: the one
// definition of the defaults, which the commands' flags show. Its
// CompensationDelay is left to WithDefaults, which derives it from the
// visibility timeout.
func DefaultWorkerConfig() WorkerConfig {
	return WorkerConfig{Visibility: 60 * time.Second, MaxDequeue: 5, PollMin: 20 * time.Millisecond, PollMax: time.Second,
		ThrottleRetries: 6, ThrottleDelay: time.Second, Clock: systemClock{}}
}

// WithDefaults fills zero fields: with DefaultWorkerConfig's values, and
// the compensation delay with four times the visibility timeout.
func (c WorkerConfig) WithDefaults() WorkerConfig {
	d := DefaultWorkerConfig()
	if c.Visibility == 0 {
		c.Visibility = d.Visibility
	}
	if c.CompensationDelay == 0 {
		c.CompensationDelay = 4 * c.Visibility
	}
	if c.MaxDequeue == 0 {
		c.MaxDequeue = d.MaxDequeue
	}
	if c.PollMin == 0 {
		c.PollMin = d.PollMin
	}
	if c.PollMax == 0 {
		c.PollMax = d.PollMax
	}
	if c.ThrottleRetries == 0 {
		c.ThrottleRetries = d.ThrottleRetries
	}
	if c.ThrottleDelay == 0 {
		c.ThrottleDelay = d.ThrottleDelay
	}
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	return c
}

func (c WorkerConfig) timing() task.Timing {
	return task.Timing{Visibility: c.Visibility, CompensationDelay: c.CompensationDelay}
}

// Validate checks a complete worker configuration.
func (c WorkerConfig) Validate() error {
	if c.Visibility < time.Second || c.Visibility > time.Hour {
		return fmt.Errorf("visibility %s: must be 1s to 1h", c.Visibility)
	}
	if c.CompensationDelay < 2*c.Visibility {
		return fmt.Errorf("compensation delay %s: must be at least twice the visibility timeout %s", c.CompensationDelay, c.Visibility)
	}
	if c.MaxDequeue < 1 {
		return fmt.Errorf("max dequeue %d: must be at least 1", c.MaxDequeue)
	}
	if c.ThrottleRetries < NoThrottleRetries || c.ThrottleRetries > MaxThrottleRetries {
		return fmt.Errorf("throttle retries %d: must be %d (none) to %d", c.ThrottleRetries, NoThrottleRetries, MaxThrottleRetries)
	}
	if c.ThrottleDelay < 0 || c.ThrottleDelay > MaxThrottleDelay {
		return fmt.Errorf("throttle delay %s: must be 0 to %s", c.ThrottleDelay, MaxThrottleDelay)
	}
	return nil
}

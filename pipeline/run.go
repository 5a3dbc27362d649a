package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
	"github.com/reversi-cloud/reversi/task"
)

// Run is an open handle on one run: its settings, queues, tables and
// blobs. It seeds, drops and works the run; handlers get only shared,
// the same run's task.Run, so that none can drop the run or read its
// poison queue. The two types keep one name because they are one thing,
// a run (docs/design.md, glossary).
type Run struct {
	Config RunConfig
	Board  *board.Board

	work   storage.Queue
	poison storage.Queue
	// compensation holds the compensation messages (CompensationQueue);
	// those of runs seeded before it existed lie on work.
	compensation storage.Queue
	blobs        storage.Container
	store        *runstore.Store
	shared       *task.Run // this run, as its handlers see it

	// What the worker loops of this process share of the run's state, so
	// that one of them reads it for all (gate): that it is complete
	// (seenDone); when its queues were last counted, whether they were
	// empty, and whether the wait for them was logged (drained); and when
	// a loop last looked for a stall (nudgeIfStalled).
	doneSeen   atomic.Bool
	doneRead   gate
	queuesRead gate
	count      struct {
		sync.Mutex
		at    time.Time
		empty bool
	}
	drainLogged  atomic.Bool
	stallChecked gate
}

func newRun(be storage.Backend, cfg RunConfig) (*Run, error) {
	b, err := board.New(cfg.Board)
	if err != nil {
		return nil, err
	}
	sharded := func(name string, names []string, probes int) (storage.Queue, error) {
		var shards []storage.Queue
		for _, name := range names {
			shards = append(shards, be.Queue(name))
		}
		return shardedqueue.NewProbing(name, shards, probes)
	}
	work, err := sharded(WorkQueue(cfg.Name), WorkQueues(cfg.Name, cfg.QueueShards), shardedqueue.Probes)
	if err != nil {
		return nil, err
	}
	// Compensation messages surface minutes after their cover, so a poll
	// asks one shard: an idle loop's poll costs what it did on one queue.
	compensation, err := sharded(CompensationQueue(cfg.Name), cfg.CompensationQueueNames(), 1)
	if err != nil {
		return nil, err
	}
	r := &Run{
		Config: cfg, Board: b,
		work:         work,
		poison:       be.Queue(PoisonQueue(cfg.Name)),
		blobs:        be.Container(Container(cfg.Name)),
		compensation: compensation,
	}
	tables := func(names []string) []storage.Table {
		ts := make([]storage.Table, len(names))
		for i, name := range names {
			ts[i] = be.Table(name)
		}
		return ts
	}
	state, back := cfg.TableNames()
	r.store = runstore.New(b, tables(state), tables(back), cfg.PartitionShards, cfg.Completion)
	r.shared = &task.Run{Name: cfg.Name, Origin: cfg.origin(b), Target: cfg.Target, Sizes: cfg.Sizes,
		Solve: cfg.Solve, SolvePositions: cfg.SolvePositions, SolveMode: cfg.SolveMode, Messages: cfg.Messages, Store: r.store, Blobs: r.blobs, Work: r.work, Compensation: r.compensation}
	return r, nil
}

// queues are the queues whose messages the run's workers handle: the
// work queue, then the compensation queue.
func (r *Run) queues() []storage.Queue { return []storage.Queue{r.work, r.compensation} }

// Queued counts the messages on the run's work and compensation queues,
// visible or not. A run seeded before the compensation queue existed
// may lack it: it then holds nothing.
func (r *Run) Queued(ctx context.Context) (int, error) {
	total := 0
	for _, q := range r.queues() {
		n, err := q.ApproximateLength(ctx)
		if err != nil && !(q == r.compensation && errors.Is(err, storage.ErrNotFound)) {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Drop deletes the run's queues, container and tables, as far as it can:
// it returns the first error and goes on past it. The table that holds
// the run's configuration goes last, so that a Drop cut short can be
// made again on the run reopened (OpenRun reads that configuration).
func (r *Run) Drop(ctx context.Context) error {
	droppers := []interface{ Drop(context.Context) error }{r.work, r.compensation, r.poison, r.blobs}
	for _, t := range slices.Backward(r.store.Tables()) {
		droppers = append(droppers, t)
	}
	var first error
	for _, d := range droppers {
		if err := d.Drop(ctx); err != nil && first == nil && !errors.Is(err, storage.ErrNotFound) {
			first = fmt.Errorf("dropping run %s: %w", r.Config.Name, err)
		}
	}
	return first
}

// Remains lists what be still holds of the run of cfg, by kind and name:
// its queues (every shard), blob container and tables. A run that Drop
// is done with leaves nothing.
func Remains(ctx context.Context, be storage.Backend, cfg RunConfig) ([]string, error) {
	var left []string
	found := func(kind, name string, err error) error {
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		left = append(left, kind+" "+name)
		return err
	}
	queues := append(WorkQueues(cfg.Name, cfg.QueueShards), cfg.CompensationQueueNames()...)
	for _, q := range append(queues, PoisonQueue(cfg.Name)) {
		_, err := be.Queue(q).ApproximateLength(ctx)
		if err := found("queue", q, err); err != nil {
			return nil, err
		}
	}
	_, err := be.Container(Container(cfg.Name)).List(ctx, "")
	if err := found("container", Container(cfg.Name), err); err != nil {
		return nil, err
	}
	state, back := cfg.TableNames()
	for _, tb := range append(state, back...) {
		_, err := be.Table(tb).Query(ctx, "p00", storage.QueryOptions{Limit: 1})
		if err := found("table", tb, err); err != nil {
			return nil, err
		}
	}
	return left, nil
}

// Ply is the run's ply of a position: discs placed since its start.
func (r *Run) Ply(p board.Position) int { return r.shared.Ply(p) }

// ErrNoRun means the named run has not been seeded.
var ErrNoRun = errors.New("run not found")

// OpenRun opens a seeded run by name, reading its recorded configuration.
func OpenRun(ctx context.Context, be storage.Backend, name string) (*Run, error) {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	if err := ValidRunName(name); err != nil {
		return nil, err
	}
	c, err := runstore.ReadConfig(ctx, be.Table(StateTable(name)))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q has not been seeded", ErrNoRun, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %q configuration: %w", name, err)
	}
	cfg := RunConfig{Name: name, Config: c}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("run %q has a bad recorded configuration: %w", name, err)
	}
	return newRun(be, cfg)
}

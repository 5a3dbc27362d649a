package cli

import (
	"flag"
	"fmt"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
)

// startFlags are the run settings (settingsFlags) beyond the board, the
// plies and the sizes: -start, -solve, -solve-positions, -solve-mode,
// -queue-shards and -partition-shards.
type startFlags struct {
	start           string
	solve           bool
	solvePositions  int
	solveMode       string
	queueShards     int
	partitionShards int
}

func (f *startFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.start, "start", "", `start from this position instead of the usual one: "SQUARES SIDE", the 16, 36 or 64 squares a1 b1 ... row by row (X black, O white, - empty), then X or O to move, as cmd/solve reads them; the board follows from it and -plies counts from it`)
	fs.BoolVar(&f.solve, "solve", false, "solve every position of the target ply exactly, so that exact scores (black minus white, empty squares to the winner) flow back to the start")
	fs.IntVar(&f.solvePositions, "solve-positions", pipeline.DefaultSolvePositions, fmt.Sprintf("with -solve: positions per final blob of the target ply; each such blob is one task that solves its positions in turn, so smaller blobs spread the solving over more workers (with -solve-mode root or wld the default is %d: larger blobs prune more)", pipeline.DefaultPrunedSolvePositions))
	fs.StringVar(&f.solveMode, "solve-mode", string(runstore.SolveAll), "with -solve: how far to solve the target ply. all: every position exactly, a table of exact scores; root: only as far as the start's exact score needs (positions bounded or skipped once their parents are settled); wld: only as far as the start's win, draw or loss needs")
	d := pipeline.DefaultRunConfig()
	fs.IntVar(&f.queueShards, "queue-shards", d.QueueShards, fmt.Sprintf("spread the work queue over this many queues (1 to %d): Azure serves about 2,000 messages a second a queue, so a fleet that would exceed that needs more", pipeline.MaxQueueShards))
	fs.IntVar(&f.partitionShards, "partition-shards", d.PartitionShards, fmt.Sprintf("spread each ply's task markers, final blob rows and resolutions over this many table partitions (1 to %d): Azure serves about 2,000 entities a second a partition", pipeline.MaxPartitionShards))
}

// apply sets cfg's start position and board from -start, and its solve
// setting. A -board given as well must agree with the start's squares.
func (f *startFlags) apply(fs *flag.FlagSet, cfg *pipeline.RunConfig) error {
	cfg.Solve, cfg.QueueShards, cfg.PartitionShards = f.solve, f.queueShards, f.partitionShards
	if given(fs, "solve-positions") {
		if !f.solve {
			return usagef("-solve-positions sizes the tasks of -solve; give -solve too, or leave it out")
		}
		if f.solvePositions < 1 {
			return usagef("-solve-positions %d: must be at least 1", f.solvePositions)
		}
		cfg.SolvePositions = f.solvePositions
	}
	if given(fs, "solve-mode") {
		if !f.solve {
			return usagef("-solve-mode says how far -solve solves; give -solve too, or leave it out")
		}
		if m := runstore.SolveMode(f.solveMode); m != runstore.SolveAll && !m.Pruned() {
			return usagef("-solve-mode %q: must be all, root or wld", f.solveMode)
		}
	}
	if f.solve {
		cfg.SolveMode = runstore.SolveMode(f.solveMode)
	}
	if f.start == "" {
		return nil
	}
	b, p, err := solve.ParsePosition(f.start)
	if err != nil {
		return usagef("-start: %v", err)
	}
	if given(fs, "board") && cfg.Board != b.Size() {
		return usagef("-start has %d squares, a %dx%d board, but -board is %d", b.Size()*b.Size(), b.Size(), b.Size(), cfg.Board)
	}
	cfg.Board, cfg.Start = b.Size(), p
	return nil
}

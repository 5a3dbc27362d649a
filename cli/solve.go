package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/solve"
)

const solveIntro = `usage: solve [flags] [file ...]

Solves Reversi endgame positions exactly: perfect play by both sides, the
final disc differential counted with empty squares going to the winner.

Reads positions from the files, or from standard input without any, one a
line: the squares a1 b1 ... h1 a2 ... h8 row by row (64 of them; 16 or 36
for the 4x4 or 6x6 board), X black, O white, - empty; white space; X or O,
the side to move. The rest of the line is ignored. Blank lines and lines
starting with # are skipped.

Writes one line per position: a best move (pa: the side to move must pass;
--: the game is over), the exact score for the side to move with its sign,
the nodes searched and the time taken, e.g.

  a2 +38 nodes=23933683 time=2.31s

Positions are solved -parallel at a time (one per CPU by default), each
by a solver with a transposition table of its own that it keeps from one
position to the next; answers come in input order. A solver takes up to
-threads goroutines for one position, sharing its table: the first
alone while every CPU has a position of its own, the others as CPUs
run out of positions at the end of the input (two threads solve a hard
position about 1.8 times as fast on two CPUs). With -threads 1 the node
counts are the same from run to run. A line that is not a position stops
the run with an error naming it, after the answers to the lines before
it.`

// solveTableMiB is the default table of the solve command: twice the
// package default, as positions typed at a command line are usually hard
// ones. FFO #40-#49 took 1% fewer nodes than with 32 MiB; a larger table
// saves a few nodes more but costs more time, its probes missing the CPU's
// caches more often (256 MiB: 5% more CPU than 64).
const solveTableMiB = 64

// Solve runs the solve command: exact scores of endgame positions. Ctrl-C
// stops it.
func Solve(env Env) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return solveLines(ctx, env.Args, env.Stdin, env.Stdout, env.Stderr)
}

func solveLines(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("solve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tableMiB := fs.Int("table-mb", solveTableMiB, "transposition table size in MiB, for each of the -parallel solvers")
	all := fs.Bool("all", false, "write every best move, comma-separated, instead of one")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "positions solved at once, each by a solver of its own")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "at most this many goroutines solve one position together, on CPUs no other position needs (1 makes node counts reproducible)")
	maxNodes := fs.Int64("max-nodes", 0, "give up on a position after this many nodes (0: no limit)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "%s\n\nFlags:\n", solveIntro)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return ExitOK
		}
		fmt.Fprintf(stderr, "solve: %v (run solve -h for help)\n", err)
		return ExitUsage
	}
	var err error
	switch {
	case *tableMiB < 1:
		err = fmt.Errorf("-table-mb %d: want at least 1", *tableMiB)
	case *parallel < 1:
		err = fmt.Errorf("-parallel %d: want at least 1", *parallel)
	case *threads < 1:
		err = fmt.Errorf("-threads %d: want at least 1", *threads)
	case *maxNodes < 0:
		err = fmt.Errorf("-max-nodes %d: want 0 or more", *maxNodes)
	}
	// Cores lends the CPUs that no solver needs, at first and as the
	// solvers run out of positions, to the helper threads of the others.
	cpus := runtime.GOMAXPROCS(0)
	cores := solve.NewCores(cpus)
	for range cpus - *parallel {
		cores.Free()
	}
	solvers := make([]*solve.Solver, *parallel)
	for i := range solvers {
		if err == nil {
			solvers[i], err = solve.New(solve.Options{TableBytes: *tableMiB << 20, MaxNodes: *maxNodes, Threads: *threads, OneBestMove: !*all, Cores: cores})
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "solve: %v (run solve -h for help)\n", err)
		return ExitUsage
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if err := solvePositions(ctx, solvers, cores, cpus, *all, fs.Args(), stdin, out); err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "solve: %v\n", err)
		if ctx.Err() != nil {
			return ExitInterrupted
		}
		return ExitFail
	}
	return ExitOK
}

// solveAhead bounds how many positions the solvers may answer ahead of the
// first answer not yet written: a few hundred bytes each.
const solveAhead = 1024

// solveJob is one position line on its way through solvePositions.
type solveJob struct {
	where   string // file:line
	b       *board.Board
	p       board.Position
	res     solve.Result
	elapsed time.Duration
	err     error
	done    chan struct{} // closed when res or err is set
}

// solvePositions solves the position lines of the files (stdin without
// any) on the solvers at once, and writes the answers in input order, each
// as soon as it and those before it are known. A bad line stops the run
// once the answers before it are written. A solver that finds no position
// left frees a CPU in cores for the others' helpers, once fewer solvers
// than cpus are left.
func solvePositions(ctx context.Context, solvers []*solve.Solver, cores *solve.Cores, cpus int, all bool, files []string, stdin io.Reader, out *bufio.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *solveJob)
	// inOrder holds the jobs handed out and not yet written. Its buffer
	// lets the solvers run ahead of the writer: a solver that finishes an
	// easy position while an earlier hard one is still being solved takes
	// the next at once, rather than idling until that answer is written.
	inOrder := make(chan *solveJob, len(solvers)+solveAhead)
	go func() {
		defer close(inOrder)
		defer close(jobs)
		readPositions(ctx, files, stdin, jobs, inOrder)
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	var running atomic.Int64
	running.Store(int64(len(solvers)))
	for _, s := range solvers {
		wg.Go(func() {
			defer func() {
				if running.Add(-1) < int64(cpus) {
					cores.Free()
				}
			}()
			// Each solver keeps its table from one position to the next.
			for j := range jobs {
				start := time.Now()
				j.res, j.err = s.SolveContext(ctx, j.b, j.p)
				if j.err != nil {
					j.err = fmt.Errorf("%s: %w", j.where, j.err)
				}
				j.elapsed = time.Since(start)
				close(j.done)
			}
		})
	}
	for j := range inOrder {
		select {
		case <-j.done:
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", j.where, ctx.Err())
		}
		if j.err != nil {
			return j.err
		}
		fmt.Fprintf(out, "%s %+d nodes=%d time=%s\n", bestMoves(j.b, j.p, j.res, all), j.res.Score, j.res.Nodes, roundDuration(j.elapsed))
		if err := out.Flush(); err != nil {
			return fmt.Errorf("writing the answer to %s: %w", j.where, err)
		}
	}
	// The reader also stops, quietly, when the context is done.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}

// readPositions parses the position lines of the files (stdin without
// any) into jobs, each sent to inOrder and then to the solvers; a line or
// file it cannot read becomes a job that is already done with the error,
// and the last one.
func readPositions(ctx context.Context, files []string, stdin io.Reader, jobs, inOrder chan<- *solveJob) {
	send := func(j *solveJob, ch chan<- *solveJob) bool {
		select {
		case ch <- j:
			return true
		case <-ctx.Done():
			return false
		}
	}
	fail := func(err error) {
		j := &solveJob{err: err, done: make(chan struct{})}
		close(j.done)
		send(j, inOrder)
	}
	read := func(name string, r io.Reader) bool {
		sc := bufio.NewScanner(r)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || line[0] == '#' {
				continue
			}
			j := &solveJob{where: fmt.Sprintf("%s:%d", name, n), done: make(chan struct{})}
			var err error
			if j.b, j.p, err = solve.ParsePosition(line); err != nil {
				fail(fmt.Errorf("%s: %w", j.where, err))
				return false
			}
			if !send(j, inOrder) || !send(j, jobs) {
				return false
			}
		}
		if err := sc.Err(); err != nil {
			fail(fmt.Errorf("reading %s: %w", name, err))
			return false
		}
		return true
	}
	if len(files) == 0 {
		read("stdin", stdin)
		return
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fail(err)
			return
		}
		ok := read(name, f)
		f.Close()
		if !ok {
			return
		}
	}
}

// bestMoves names the best move, or all of them with all.
func bestMoves(b *board.Board, p board.Position, res solve.Result, all bool) string {
	switch {
	case len(res.BestMoves) == 0 && b.Terminal(p):
		return "--"
	case len(res.BestMoves) == 0:
		return "pa"
	case !all:
		return b.SquareName(res.BestMoves[0])
	}
	names := make([]string, len(res.BestMoves))
	for i, sq := range res.BestMoves {
		names[i] = b.SquareName(sq)
	}
	return strings.Join(names, ",")
}

// roundDuration keeps three significant digits or so.
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	}
	return d.Round(time.Microsecond).String()
}

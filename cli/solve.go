package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

A line that is not a position stops the run with an error naming it.`

// Solve runs the solve command: exact scores of endgame positions.
func Solve(env Env) int { return solveLines(env.Args, env.Stdin, env.Stdout, env.Stderr) }

func solveLines(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("solve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tableMiB := fs.Int("table-mb", solve.DefaultTableBytes>>20, "transposition table size in MiB")
	all := fs.Bool("all", false, "write every best move, comma-separated, instead of one")
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
	s, err := solve.New(solve.Options{TableBytes: *tableMiB << 20})
	if *tableMiB < 1 {
		err = fmt.Errorf("-table-mb %d: want at least 1", *tableMiB)
	}
	if err != nil {
		fmt.Fprintf(stderr, "solve: %v (run solve -h for help)\n", err)
		return ExitUsage
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	c := solveCmd{s: s, all: *all, out: out}
	if fs.NArg() == 0 {
		err = c.solveAll("stdin", stdin)
	}
	for _, name := range fs.Args() {
		if err = c.solveFile(name); err != nil {
			break
		}
	}
	if err != nil {
		out.Flush()
		fmt.Fprintf(stderr, "solve: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

// solveCmd solves position lines with one Solver, so that later positions
// reuse what earlier ones put in its table.
type solveCmd struct {
	s   *solve.Solver
	all bool
	out *bufio.Writer
}

func (c *solveCmd) solveFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.solveAll(name, f)
}

// solveAll solves every position line of r, writing each answer as soon
// as it is known.
func (c *solveCmd) solveAll(name string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		b, p, err := solve.ParsePosition(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		start := time.Now()
		res, err := c.s.Solve(b, p)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		fmt.Fprintf(c.out, "%s %+d nodes=%d time=%s\n", c.moves(b, p, res), res.Score, res.Nodes, roundDuration(time.Since(start)))
		if err := c.out.Flush(); err != nil {
			return fmt.Errorf("writing the answer to %s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// moves names the best move, or all of them with -all.
func (c *solveCmd) moves(b *board.Board, p board.Position, res solve.Result) string {
	switch {
	case len(res.BestMoves) == 0 && b.Terminal(p):
		return "--"
	case len(res.BestMoves) == 0:
		return "pa"
	case !c.all:
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

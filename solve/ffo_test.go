package solve

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// ffoCase is one line of testdata/ffo-40-49.txt.
type ffoCase struct {
	name  string
	b     *board.Board
	p     board.Position
	score int
	best  []int
}

func loadFFO(t testing.TB) []ffoCase {
	t.Helper()
	f, err := os.Open("testdata/ffo-40-49.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []ffoCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		b, p, err := ParsePosition(line)
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		fields := strings.Fields(line)
		if len(fields) != 5 {
			t.Fatalf("line %d: %d fields, want 5", n, len(fields))
		}
		c := ffoCase{name: fields[4], b: b, p: p}
		if c.score, err = strconv.Atoi(fields[2]); err != nil {
			t.Fatalf("line %d: score: %v", n, err)
		}
		for _, m := range strings.Split(fields[3], ",") {
			sq, err := b.ParseSquare(m)
			if err != nil {
				t.Fatalf("line %d: %v", n, err)
			}
			// A listed best move that is not even legal would mean the
			// squares are not in the order the header says.
			if b.Flips(p, sq) == 0 {
				t.Fatalf("line %d: best move %s is not legal", n, m)
			}
			c.best = append(c.best, sq)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 10 {
		t.Fatalf("%d positions, want 10", len(cases))
	}
	return cases
}

// quickFFO are the positions TestFFO solves by default: #40, the fastest
// of the ten (about 2 s of CPU); REVERSI_FFO_ALL=1 solves all ten.
var quickFFO = map[string]bool{"ffo40": true}

// TestFFO requires the exact published score and a published best move for
// every move the solver calls best, from one thread and from two.
func TestFFO(t *testing.T) {
	all := os.Getenv("REVERSI_FFO_ALL") == "1"
	for _, threads := range []int{1, 2} {
		s, err := New(Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range loadFFO(t) {
			t.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(t *testing.T) {
				if !all && !quickFFO[c.name] {
					t.Skip("REVERSI_FFO_ALL=1 solves it (see the benchmarks for its time)")
				}
				got, err := s.Solve(c.b, c.p)
				if err != nil {
					t.Fatal(err)
				}
				if got.Score != c.score {
					t.Errorf("score %+d, want %+d", got.Score, c.score)
				}
				if len(got.BestMoves) == 0 {
					t.Errorf("no best move")
				}
				for _, m := range got.BestMoves {
					if !slices.Contains(c.best, m) {
						t.Errorf("best move %s is not among the published %v", c.b.SquareName(m), c.best)
					}
				}
			})
		}
	}
}

// BenchmarkFFO solves each FFO position with an empty table every time,
// on one thread and on two: ns/op is the time for the position, nodes/op
// its nodes (those of both threads), nodes/s the search speed.
func BenchmarkFFO(b *testing.B) {
	for _, c := range loadFFO(b) {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				var nodes int64
				for b.Loop() {
					res, err := Solve(c.b, c.p, Options{Threads: threads})
					if err != nil || res.Score != c.score || !slices.Contains(c.best, res.BestMoves[0]) {
						b.Fatalf("score %+d, best %v, %v; want %+d, %v", res.Score, res.BestMoves, err, c.score, c.best)
					}
					nodes += res.Nodes
				}
				b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
				b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
			})
		}
	}
}

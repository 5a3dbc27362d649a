package solve

import (
	"math/bits"
	"math/rand"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func FuzzParsePosition(f *testing.F) {
	f.Add("-----OX--XO----- X")
	f.Add("O--OOOOX-OOOOOOXOOXXOOOXOOXOOOXXOOOOOOXX---OOOOX----O--X-------- X +38 a2 ffo40")
	f.Add("xo--------------------------------- o")
	f.Fuzz(func(t *testing.T, line string) {
		b, p, err := ParsePosition(line)
		if err != nil {
			return
		}
		if err := b.Valid(p); err != nil {
			t.Fatalf("ParsePosition(%q) accepted an invalid position: %v", line, err)
		}
		fields := strings.Fields(line)
		if got, want := FormatPosition(b, p), strings.ToUpper(fields[0]+" "+fields[1]); got != want {
			t.Fatalf("ParsePosition(%q) reads as %q", line, got)
		}
	})
}

// FuzzSolve compares the solver with brute force on positions reached by
// random games: any board size, few enough empties for brute force.
func FuzzSolve(f *testing.F) {
	f.Add(int64(1), uint8(4), uint8(12))
	f.Add(int64(2), uint8(6), uint8(8))
	f.Add(int64(3), uint8(8), uint8(8))
	f.Add(int64(4), uint8(8), uint8(3))
	s := newSolver(f, 1<<14)
	f.Fuzz(func(t *testing.T, seed int64, size, empties uint8) {
		b := []*board.Board{board.MustNew(4), board.MustNew(6), board.MustNew(8)}[size%3]
		e := int(empties % 10)
		if b.Size() == 4 {
			e = int(empties % 13)
		}
		checkAgainstBrute(t, s, b, randomPosition(b, rand.New(rand.NewSource(seed)), e))
	})
}

// TestStable walks every continuation of random positions with few empties
// and checks that the discs stable calls stable never change colour.
func TestStable(t *testing.T) {
	for _, size := range []int{4, 6, 8} {
		b := board.MustNew(size)
		g := geometries[size]
		rng := rand.New(rand.NewSource(int64(size)))
		found := 0
		for range 300 {
			p := randomPosition(b, rng, 6)
			black := g.stable(p.Black(), p.Occ)
			white := g.stable(p.White, p.Occ)
			found += bits.OnesCount64(black | white)
			var walk func(q board.Position)
			walk = func(q board.Position) {
				if q.Black()&black != black || q.White&white != white {
					t.Fatalf("%dx%d: stable discs of\n%sflipped in\n%s", size, size, b.Diagram(p), b.Diagram(q))
				}
				for m := b.Moves(q); m != 0; m &= m - 1 {
					next, _ := b.Play(q, bits.TrailingZeros64(m))
					walk(next)
				}
			}
			walk(p)
		}
		if found == 0 {
			t.Errorf("%dx%d: no stable disc found in 300 positions", size, size)
		}
	}
}

func TestOptions(t *testing.T) {
	if _, err := New(Options{MaxNodes: -1}); err == nil {
		t.Error("MaxNodes -1 accepted")
	}
	for _, bad := range []int{-1, maxTableBytes + 1} {
		if _, err := New(Options{TableBytes: bad}); err == nil {
			t.Errorf("TableBytes %d accepted", bad)
		}
	}
	b := board.MustNew(4)
	if _, err := Solve(b, board.Position{Occ: 1 << 7}, Options{}); err == nil {
		t.Error("a disc off the 4x4 board accepted")
	}
}

// TestConcurrent solves positions from several goroutines with the
// package-level Solve, which go test -race checks for shared state.
func TestConcurrent(t *testing.T) {
	b := board.MustNew(6)
	rng := rand.New(rand.NewSource(9))
	ps := make([]board.Position, 8)
	for i := range ps {
		ps[i] = randomPosition(b, rng, 9)
	}
	want := make([]int, len(ps))
	for i, p := range ps {
		want[i], _ = brute(b, p)
	}
	errs := make(chan string, len(ps))
	for i, p := range ps {
		go func() {
			res, err := Solve(b, p, Options{TableBytes: 1 << 16})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.Score != want[i]:
				errs <- FormatPosition(b, p)
			default:
				errs <- ""
			}
		}()
	}
	for range ps {
		if e := <-errs; e != "" {
			t.Errorf("concurrent solve: %s", e)
		}
	}
}

package reference

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
)

// slowCanonical reduces a position by moving squares one at a time, a code
// path independent of the bit tricks in board.Canonical.
func slowCanonical(b *board.Board, p board.Position) board.Position {
	best := p
	for i := 1; i < 8; i++ {
		var q board.Position
		q.Side = p.Side
		for occ := p.Occ; occ != 0; occ &= occ - 1 {
			sq := bits.TrailingZeros64(occ)
			to := uint64(1) << b.TransformSquare(sq, i)
			q.Occ |= to
			if p.White>>sq&1 == 1 {
				q.White |= to
			}
		}
		if q.Occ < best.Occ || q.Occ == best.Occ && q.White < best.White {
			best = q
		}
	}
	return best
}

// bruteForce enumerates actual positions, without symmetry, and decides
// their results by a direct recursion over actual moves.
type bruteForce struct {
	b      *board.Board
	target int
	memo   map[board.Position]board.Result
}

func (f *bruteForce) result(p board.Position) board.Result {
	if r, ok := f.memo[p]; ok {
		return r
	}
	var r board.Result
	switch {
	case f.b.Terminal(p):
		r = f.b.Result(p)
	case f.b.Ply(p) == f.target:
		r = board.Unknown
	default:
		win := board.WinFor(p.Side)
		sawUnknown, sawDraw := false, false
		r = board.WinFor(p.Side.Opponent())
		for m := f.b.Moves(p); m != 0; m &= m - 1 {
			q, err := f.b.Play(p, bits.TrailingZeros64(m))
			if err != nil {
				panic(err)
			}
			c := f.result(q)
			if c == win {
				sawUnknown, sawDraw, r = false, false, win
				break
			}
			sawUnknown = sawUnknown || c == board.Unknown
			sawDraw = sawDraw || c == board.Draw
		}
		if sawUnknown {
			r = board.Unknown
		} else if sawDraw {
			r = board.Draw
		}
	}
	f.memo[p] = r
	return r
}

// TestEnumerateAgainstBruteForce recounts small targets on every size
// without symmetry and compares counts per ply and results per position.
func TestEnumerateAgainstBruteForce(t *testing.T) {
	tests := []struct{ size, target int }{
		{4, 12},
		{6, 9},
		{8, 6},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dx%d", tc.size, tc.target), func(t *testing.T) {
			b := board.MustNew(tc.size)
			res, err := Enumerate(b, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			f := &bruteForce{b: b, target: tc.target, memo: map[board.Position]board.Result{}}
			ply := map[board.Position]bool{b.Start(): true}
			var prev map[board.Position]board.Result // classes of the ply before
			for n := 0; n <= tc.target; n++ {
				classes := map[board.Position]board.Result{}
				var terminal, edges int64
				for p := range ply {
					c := slowCanonical(b, p)
					r := f.result(p)
					if old, seen := classes[c]; seen && old != r {
						t.Fatalf("ply %d: symmetric positions differ in result: %v %v", n, old, r)
					}
					classes[c] = r
				}
				for c := range classes {
					if b.Terminal(c) {
						terminal++
					}
				}
				for c := range prev {
					edges += int64(bits.OnesCount64(b.Moves(c)))
				}
				prev = classes
				row := res.Report.Plies[n]
				if row.Positions != int64(len(classes)) || row.Terminal != terminal || row.Edges != edges {
					t.Errorf("ply %d: report %+v; brute force %d positions, %d terminal, %d edges", n, row, len(classes), terminal, edges)
				}
				if len(res.Plies[n]) != len(classes) {
					t.Fatalf("ply %d: %d positions, brute force %d", n, len(res.Plies[n]), len(classes))
				}
				for c, r := range classes {
					if got, ok := res.Plies[n][c]; !ok || got != r {
						t.Fatalf("ply %d: %v is %v (present %v), brute force says %v", n, c, got, ok, r)
					}
				}
				if n == tc.target {
					break
				}
				ply = testkit.PlayAll(t, b, ply)
			}
		})
	}
}

// TestTakizawaAgainstBruteForce recounts Takizawa's convention from actual
// positions on the whole 4x4 game and early 6x6 plies, where terminal
// positions and colour-swapped twins both occur.
func TestTakizawaAgainstBruteForce(t *testing.T) {
	tests := []struct{ size, lastPly int }{
		{4, 12},
		{6, 7},
	}
	for _, tc := range tests {
		b := board.MustNew(tc.size)
		ply := map[board.Position]bool{b.Start(): true}
		for n := 0; n <= tc.lastPly; n++ {
			pairs := map[board.Position]bool{}
			for p := range ply {
				if !b.Terminal(p) {
					pairs[slowCanonical(b, board.Position{Occ: p.Occ, White: p.Mover()})] = true
				}
			}
			got, err := TakizawaCount(b, n+4)
			if err != nil || got != int64(len(pairs)) {
				t.Errorf("%dx%d, %d discs: TakizawaCount = %d, %v; brute force %d", tc.size, tc.size, n+4, got, err, len(pairs))
			}
			ply = testkit.PlayAll(t, b, ply)
		}
	}
}

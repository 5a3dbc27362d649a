// Package reference is a single-process, in-memory enumerator that follows
// the definitions in docs/reference.md literally. It uses no storage, so the
// distributed pipeline can be checked against it ply by ply and position by
// position.
package reference

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
)

// Result is the outcome of Enumerate.
type Result struct {
	// Report is the per-ply summary in the project's common format.
	Report *report.Report
	// Plies holds, for each ply 0..target, every canonical position of that
	// ply with its result.
	Plies []map[board.Position]board.Result
}

// checkTarget rejects plies the board cannot reach. The last ply, with the
// board full, is size²-4, and every ply up to it has positions because some
// games fill the board, so no valid target yields an empty ply.
func checkTarget(b *board.Board, target int) error {
	if b == nil {
		return errors.New("reference: nil board")
	}
	if last := b.Size()*b.Size() - 4; target < 0 || target > last {
		return fmt.Errorf("reference: target ply %d out of range 0..%d for the %dx%d board", target, last, b.Size(), b.Size())
	}
	return nil
}

// expand returns the next ply: the distinct canonical children of the
// non-terminal positions of cur, all Unknown, and the number of edges (legal
// moves summed over those positions). Terminal positions have no moves, so
// Children skips them without a separate test.
func expand(b *board.Board, cur map[board.Position]board.Result) (map[board.Position]board.Result, int64) {
	next := make(map[board.Position]board.Result, len(cur)*6)
	var edges int64
	buf := make([]board.Position, 0, 64)
	for p := range cur {
		var moves int
		buf, moves = b.Children(p, buf[:0])
		edges += int64(moves)
		for _, c := range buf {
			next[c] = board.Unknown
		}
	}
	return next, edges
}

// decide applies the result rules to a non-terminal position whose children
// have the given results: a win for the side to move if any child is one;
// otherwise unknown while any child is; otherwise a draw if any child draws;
// otherwise a win for the opponent. Results are absolute, so a child reached
// through a folded pass, with the same side to move, needs no special case.
func decide(side board.Color, children []board.Result) board.Result {
	win := board.WinFor(side)
	unknown, draw := false, false
	for _, r := range children {
		switch r {
		case win:
			return win
		case board.Unknown:
			unknown = true
		case board.Draw:
			draw = true
		}
	}
	switch {
	case unknown:
		return board.Unknown
	case draw:
		return board.Draw
	}
	return board.WinFor(side.Opponent())
}

// Enumerate counts canonical positions ply by ply from the start up to
// target, then propagates results back from the terminal positions as
// docs/reference.md defines. When every position at the target ply is terminal
// the whole game has been enumerated and the report carries the
// perfect-play score.
func Enumerate(b *board.Board, target int) (*Result, error) {
	if err := checkTarget(b, target); err != nil {
		return nil, err
	}
	plies := make([]map[board.Position]board.Result, target+1)
	rows := make([]report.Ply, target+1)
	plies[0] = map[board.Position]board.Result{b.Canonical(b.Start()): board.Unknown}
	for n := 0; n < target; n++ {
		plies[n+1], rows[n+1].Edges = expand(b, plies[n])
	}

	// Results flow from the target ply back to the start; every child of a
	// ply-n position is at ply n+1, which is already decided.
	complete := true
	buf := make([]board.Position, 0, 64)
	var res []board.Result
	for n := target; n >= 0; n-- {
		for p := range plies[n] {
			var r board.Result
			switch {
			case b.Terminal(p):
				r = b.Result(p)
				rows[n].Terminal++
			case n == target:
				r = board.Unknown
				complete = false
			default:
				buf, _ = b.Children(p, buf[:0])
				res = res[:0]
				for _, c := range buf {
					res = append(res, plies[n+1][c])
				}
				r = decide(p.Side, res)
			}
			plies[n][p] = r
			switch r {
			case board.BlackWins:
				rows[n].BlackWins++
			case board.WhiteWins:
				rows[n].WhiteWins++
			case board.Draw:
				rows[n].Draws++
			default:
				rows[n].Unknown++
			}
		}
		rows[n].Ply = n
		rows[n].Positions = int64(len(plies[n]))
	}

	rep := &report.Report{
		Board:               b.Size(),
		TargetPly:           target,
		Complete:            true,
		Root:                plies[0][b.Canonical(b.Start())].String(),
		Engine:              "reference",
		StorageTransactions: 0,
		Plies:               rows,
	}
	if complete {
		scores := perfectPlay(b, plies)
		s := scores[0][b.Canonical(b.Start())]
		rep.Score = &report.Score{Black: int(s.black), White: int(s.white)}
	}
	return &Result{Report: rep, Plies: plies}, nil
}

// score is a final disc count.
type score struct{ black, white int8 }

// better reports whether a is a better final count than b for side: a
// larger margin for side, then more of side's own discs. The two keys fix
// both counts, so the choice among equally good moves is deterministic.
func better(side board.Color, a, b score) bool {
	own, opp, bOwn, bOpp := a.black, a.white, b.black, b.white
	if side == board.White {
		own, opp, bOwn, bOpp = a.white, a.black, b.white, b.black
	}
	if own-opp != bOwn-bOpp {
		return own-opp > bOwn-bOpp
	}
	return own > bOwn
}

// perfectPlay computes, for every position, the final score under minimax
// over disc counts, each side maximising its own margin. It needs the whole
// game tree, so it runs only when the enumeration reached every game's end.
func perfectPlay(b *board.Board, plies []map[board.Position]board.Result) []map[board.Position]score {
	scores := make([]map[board.Position]score, len(plies))
	buf := make([]board.Position, 0, 64)
	for n := len(plies) - 1; n >= 0; n-- {
		cur := make(map[board.Position]score, len(plies[n]))
		for p := range plies[n] {
			if b.Terminal(p) {
				w := bits.OnesCount64(p.White)
				cur[p] = score{black: int8(p.Discs() - w), white: int8(w)}
				continue
			}
			buf, _ = b.Children(p, buf[:0])
			best := scores[n+1][buf[0]]
			for _, c := range buf[1:] {
				if s := scores[n+1][c]; better(p.Side, s, best) {
					best = s
				}
			}
			cur[p] = best
		}
		scores[n] = cur
	}
	return scores
}

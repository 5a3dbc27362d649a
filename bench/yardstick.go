package bench

import (
	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/report"
)

// Yardstick is the speed to match: a straightforward single-threaded
// in-memory enumerator. Going forward it keeps one hash map per ply of
// the canonical children of the previous ply; going back it decides each
// position from its children's results with the rules of docs/reference.md.
// It is deliberately plain (Go maps, no sorting, no storage), so that it
// measures what one process does with the machine when nothing is
// distributed, on the same machine at the same time as the engines.
func Yardstick(b *board.Board, target int) *report.Report {
	plies := make([]map[board.Position]board.Result, target+1)
	rows := make([]report.Ply, target+1)
	plies[0] = map[board.Position]board.Result{b.Canonical(b.Start()): board.Unknown}
	kids := make([]board.Position, 0, 32)
	for n := 0; n < target; n++ {
		next := make(map[board.Position]board.Result, 8*len(plies[n]))
		for p := range plies[n] {
			var moves int
			kids, moves = b.Children(p, kids[:0])
			rows[n+1].Edges += int64(moves)
			for _, k := range kids {
				next[k] = board.Unknown
			}
		}
		plies[n+1] = next
	}
	for n := target; n >= 0; n-- {
		row := &rows[n]
		row.Ply, row.Positions = n, int64(len(plies[n]))
		for p := range plies[n] {
			var r board.Result
			switch {
			case b.Terminal(p):
				row.Terminal++
				r = b.Result(p)
			case n < target:
				kids, _ = b.Children(p, kids[:0])
				r = decide(p.Side, kids, plies[n+1])
			}
			plies[n][p] = r
			switch r {
			case board.BlackWins:
				row.BlackWins++
			case board.WhiteWins:
				row.WhiteWins++
			case board.Draw:
				row.Draws++
			default:
				row.Unknown++
			}
		}
		if n+1 <= target {
			plies[n+1] = nil // its results are no longer needed
		}
	}
	return &report.Report{
		Board: b.Size(), TargetPly: target, Complete: true, Engine: "yardstick",
		Root: plies[0][b.Canonical(b.Start())].String(), Plies: rows,
	}
}

// decide applies the result rules of docs/reference.md (backtrack.Decide) to a
// position whose distinct children are kids.
func decide(side board.Color, kids []board.Position, results map[board.Position]board.Result) board.Result {
	var t backtrack.Tally
	for _, k := range kids {
		t.Add(side, backtrack.Notice{Result: results[k]})
	}
	return backtrack.Decide(side, len(kids), t)
}

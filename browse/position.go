package browse

import (
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
)

// ParseMoves plays a move list such as "f5d6c3" from a run's start
// position. From the board's usual start it is board.ParseMoves; from
// any other, passes are folded in as everywhere, so "pa" tokens are
// skipped.
func ParseMoves(o message.Origin, moves string) (board.Position, error) {
	b, p := o.Board, o.Start
	if p == b.Start() {
		return b.ParseMoves(moves)
	}
	n := 0
	for _, tok := range strings.FieldsFunc(moves, func(r rune) bool { return strings.ContainsRune(" ,\t\r\n", r) }) {
		for ; len(tok) >= 2; tok = tok[2:] {
			n++
			if strings.EqualFold(tok[:2], "pa") {
				continue
			}
			sq, err := b.ParseSquare(tok[:2])
			if err != nil {
				return p, fmt.Errorf("move %d: %w", n, err)
			}
			q, err := b.Play(p, sq)
			if err != nil {
				return p, fmt.Errorf("move %d from the run's start: %w", n, err)
			}
			p = q
		}
		if tok != "" {
			return p, fmt.Errorf("move %d: %q is cut short", n+1, tok)
		}
	}
	return p, nil
}

// Position is the JSON of /api/position, and of inspect -json for one
// position. Keys are 33-character texts
// (b|w, occupancy and white discs in hex). Results are "black", "white",
// "draw" or "unknown" once the position's ply is resolved, "unresolved"
// before; a child beyond the run's target ply has "beyond target".
type Position struct {
	Key       string   `json:"key"`       // as asked, in its own orientation
	Canonical string   `json:"canonical"` // the image the run stores
	Ply       int      `json:"ply"`
	Side      string   `json:"side"` // to move: "black" or "white"
	Rows      []string `json:"rows"` // top row first: X black, O white, . empty
	Result    string   `json:"result"`
	Score     *[2]int  `json:"score,omitempty"` // perfect-play discs, black then white
	Diff      *int     `json:"diff,omitempty"`  // perfect play, black minus white, empty squares to the winner
	// Bounds are what a pruned solve (solve mode root or wld) proved
	// where it proved no exact score: black minus white lies in them.
	Bounds *[2]int `json:"bounds,omitempty"`
	// Frontier is "solved", "bounded" or "skipped" for a position of the
	// target ply of a pruned solve (see pipeline.PositionInfo).
	Frontier  string   `json:"frontier,omitempty"`
	BestMoves []string `json:"best_moves,omitempty"`
	Parents   []string `json:"parents"` // canonical keys
	// ParentsUndone: the parents came from undoing a move, not from
	// backtracking rows (pipeline.PositionInfo.ParentsUndone).
	ParentsUndone bool    `json:"parents_undone"`
	Children      []Child `json:"children"`
	Error         string  `json:"error,omitempty"` // why the run does not hold it
}

// Child is one distinct child of a Position.
type Child struct {
	Moves     []string `json:"moves"` // the moves reaching it, e.g. ["a1"]
	Key       string   `json:"key"`   // the position after the first move, in this orientation
	Canonical string   `json:"canonical"`
	InRun     bool     `json:"in_run"`
	Result    string   `json:"result"`
	Score     *[2]int  `json:"score,omitempty"`
	Diff      *int     `json:"diff,omitempty"`
	Bounds    *[2]int  `json:"bounds,omitempty"`
}

// NewPosition describes what a run knows about a position.
func NewPosition(b *board.Board, info *pipeline.PositionInfo) Position {
	p := info.Position
	out := Position{Key: p.Text(), Canonical: info.Canonical.Text(), Ply: info.Ply, Side: p.Side.String(),
		Rows: b.Rows(p, '.'), Result: resultText(info.Resolved, info.Result), Score: scorePair(info.Score), Diff: scoreDiff(info.Score),
		Bounds: scoreBounds(info.Score), Frontier: info.Frontier, BestMoves: info.BestMoves(), Parents: []string{}, ParentsUndone: info.ParentsUndone, Children: []Child{}}
	for _, q := range info.Parents {
		out.Parents = append(out.Parents, q.Text())
	}
	for _, c := range info.Children {
		ch := Child{Moves: c.Moves, Canonical: c.Canonical.Text(), InRun: c.InRun, Result: "beyond target", Score: scorePair(c.Score), Diff: scoreDiff(c.Score), Bounds: scoreBounds(c.Score)}
		// Lookup named the moves from p, so they parse and play.
		if sq, err := b.ParseSquare(c.Moves[0]); err == nil {
			if q, err := b.Play(p, sq); err == nil {
				ch.Key = q.Text()
			}
		}
		if c.InRun {
			ch.Result = resultText(c.Resolved, c.Result)
		}
		out.Children = append(out.Children, ch)
	}
	return out
}

func resultText(resolved bool, r board.Result) string {
	if !resolved {
		return "unresolved"
	}
	return r.String()
}

func scorePair(s backtrack.Score) *[2]int {
	if !s.Known() {
		return nil
	}
	return &[2]int{int(s.Black), int(s.White)}
}

// scoreDiff is an exact score as black minus white: what a solved
// position has even where no final count is known.
func scoreDiff(s backtrack.Score) *int {
	if !s.Exact {
		return nil
	}
	d := int(s.Diff)
	return &d
}

// scoreBounds is a bounded score's interval, black minus white.
func scoreBounds(s backtrack.Score) *[2]int {
	if !s.Bounded {
		return nil
	}
	return &[2]int{int(s.Diff), int(s.Upper)}
}

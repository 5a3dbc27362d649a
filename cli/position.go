package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/browse"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
)

// positionFlags are inspect's -position and -moves: show one position.
type positionFlags struct {
	key   string
	moves string
}

func (f *positionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.key, "position", "", "show one position, given as a 33-character key (b|w, 16 hex occupancy, 16 hex white)")
	fs.StringVar(&f.moves, "moves", "", "show the position reached by these moves from the start, e.g. f5d6c3 (\"pa\" for a pass)")
}

func (f *positionFlags) set() bool { return f.key != "" || f.moves != "" }

func (f *positionFlags) validate() error {
	if f.key != "" && f.moves != "" {
		return usagef("-position and -moves name the same thing; give one")
	}
	return nil
}

// position parses the flag against the run's board and start position.
func (f *positionFlags) position(b *board.Board, start board.Position) (board.Position, error) {
	if f.key != "" {
		p, err := b.ParseText(strings.TrimSpace(f.key))
		if err != nil {
			return board.Position{}, usagef("-position: %v", err)
		}
		return p, nil
	}
	p, err := browse.ParseMoves(message.Origin{Board: b, Start: start}, f.moves)
	if err != nil {
		return board.Position{}, usagef("-moves: %v", err)
	}
	return p, nil
}

// show prints what the run knows about the position, and writes it as
// JSON when jsonOut is set.
func (f *positionFlags) show(ctx context.Context, env Env, r *pipeline.Run, jsonOut string) error {
	p, err := f.position(r.Board, r.Config.Start)
	if err != nil {
		return err
	}
	info, err := r.Lookup(ctx, p)
	if errors.Is(err, pipeline.ErrNotInRun) {
		return fmt.Errorf("position %s (ply %d) is not in run %q: %w", r.Board.Canonical(p).Text(), r.Ply(p), r.Config.Name, err)
	}
	if err != nil {
		return err
	}
	if f.moves != "" {
		fmt.Fprintf(env.Stdout, "after %s:\n", strings.TrimSpace(f.moves))
	}
	writePosition(env.Stdout, r.Board, info)
	if jsonOut != "" {
		b, err := json.MarshalIndent(browse.NewPosition(r.Board, info), "", "  ")
		if err != nil {
			return fmt.Errorf("encoding position: %w", err)
		}
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing position: %w", err)
		}
	}
	return nil
}

func resultText(resolved bool, r board.Result, s backtrack.Score) string {
	if !resolved {
		return "not resolved yet"
	}
	out := r.String()
	switch {
	case s.Known():
		out += fmt.Sprintf(" (perfect play %d-%d)", s.Black, s.White)
	case s.Exact:
		out += fmt.Sprintf(" (score %+d)", s.Diff)
	case s.Bounded:
		out += fmt.Sprintf(" (score %+d to %+d)", s.Diff, s.Upper)
	}
	return out
}

func writePosition(w io.Writer, b *board.Board, info *pipeline.PositionInfo) {
	fmt.Fprint(w, b.Diagram(info.Position))
	fmt.Fprintf(w, "key        %s\n", info.Position.Text())
	fmt.Fprintf(w, "canonical  %s\n", info.Canonical.Text())
	fmt.Fprintf(w, "ply        %d\n", info.Ply)
	fmt.Fprintf(w, "result     %s\n", resultText(info.Resolved, info.Result, info.Score))
	if info.Resolved && info.Score.Exact {
		fmt.Fprintf(w, "score      %+d (black minus white, empty squares to the winner)\n", info.Score.Diff)
	}
	if info.Frontier != "" {
		fmt.Fprintf(w, "frontier   %s by the pruned solve\n", info.Frontier)
	}
	if best := info.BestMoves(); len(best) > 0 {
		keep := "keep the draw"
		switch info.Result {
		case board.WinFor(info.Position.Side):
			keep = info.Position.Side.String() + " keeps the win"
		case board.WinFor(info.Position.Side.Opponent()):
			keep = info.Position.Side.String() + " loses by the least"
		}
		fmt.Fprintf(w, "best moves %s (%s)\n", strings.Join(best, " "), keep)
	}
	from := "from the backtracking rows"
	if info.ParentsUndone {
		from = "by undoing a move: the run's last ply keeps backtracking rows for terminal positions only"
	}
	fmt.Fprintf(w, "parents    %d (%s)\n", len(info.Parents), from)
	for _, p := range info.Parents {
		fmt.Fprintf(w, "  %s\n", p.Text())
	}
	fmt.Fprintf(w, "children   %d distinct\n", len(info.Children))
	for _, c := range info.Children {
		res := "beyond the run's target ply"
		if c.InRun {
			res = resultText(c.Resolved, c.Result, c.Score)
		}
		fmt.Fprintf(w, "  %-8s %s  %s\n", strings.Join(c.Moves, ","), c.Canonical.Text(), res)
	}
}

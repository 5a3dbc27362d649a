package board

import (
	"fmt"
	"strings"
)

// onBoard reports whether sq is a square of this board.
func (b *Board) onBoard(sq int) bool {
	return sq >= 0 && sq < 64 && b.mask>>uint(sq)&1 != 0
}

// SquareName returns the name of sq: column letter from "a", row number
// from 1 at the top, as in "d4". A square off the board is named "sq<n>" so
// that error messages stay readable instead of panicking.
func (b *Board) SquareName(sq int) string {
	if !b.onBoard(sq) {
		return fmt.Sprintf("sq%d", sq)
	}
	return string([]byte{'a' + byte(sq%8), '1' + byte(sq/8)})
}

// ParseSquare parses a square name such as "d4" (either case) on this board.
func (b *Board) ParseSquare(s string) (int, error) {
	if len(s) != 2 {
		return 0, fmt.Errorf("board: square %q: want a column letter and a row digit", s)
	}
	c := int(s[0]|0x20) - 'a' // |0x20 folds ASCII upper case onto lower case
	r := int(s[1]) - '1'
	if c < 0 || c >= b.size || r < 0 || r >= b.size {
		return 0, fmt.Errorf("board: square %q is not on the %dx%d board (a1..%c%d)",
			s, b.size, b.size, 'a'+b.size-1, b.size)
	}
	return r*8 + c, nil
}

// ParseMoves plays a transcript such as "f5d6c3d3c4" from Start and returns
// the actual (not canonical) position. Moves are case-insensitive and may be
// separated by spaces or commas. "pa" marks a pass; it is accepted only right
// after a move that Play folded a pass into, because only there did the side
// that simple alternation names have no move. Passes may also be left out.
// Errors name the 1-based move number, counting passes, and the reason; the
// position returned with an error is the one before the offending move, for
// tools that show where a transcript went wrong.
func (b *Board) ParseMoves(s string) (Position, error) {
	p := b.start
	passDue := false // the last move folded in a pass not yet written as "pa"
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		n++
		if i+2 > len(s) {
			return p, fmt.Errorf("board: move %d: %q is cut short", n, s[i:])
		}
		tok := s[i : i+2]
		i += 2
		if strings.EqualFold(tok, "pa") {
			if !passDue {
				if b.Terminal(p) {
					return p, fmt.Errorf("board: move %d: pass after the game is over", n)
				}
				return p, fmt.Errorf("board: move %d: pass, but %s has a legal move", n, p.Side)
			}
			passDue = false
			continue
		}
		sq, err := b.ParseSquare(tok)
		if err != nil {
			return p, fmt.Errorf("board: move %d: %w", n, err)
		}
		if b.Flips(p, sq) == 0 {
			var why string
			switch {
			case b.Terminal(p):
				why = "the game is over"
			case p.Occ>>uint(sq)&1 != 0:
				why = "square occupied"
			default:
				why = "flips nothing"
			}
			return p, fmt.Errorf("board: move %d: %s for %s: %s", n, b.SquareName(sq), p.Side, why)
		}
		q, _ := b.Play(p, sq)
		passDue = q.Side == p.Side
		p = q
	}
	return p, nil
}

// Rows returns the rows of p, the first (a1 to h1 on 8x8) first: a
// character a square, X for black, O for white and empty for an empty
// one. Diagram, the browser and solve's position lines draw squares so.
func (b *Board) Rows(p Position, empty byte) []string {
	rows := make([]string, b.size)
	for r := range rows {
		row := make([]byte, b.size)
		for c := range row {
			bit := uint64(1) << uint(r*8+c)
			switch {
			case p.White&bit != 0:
				row[c] = 'O'
			case p.Occ&bit != 0:
				row[c] = 'X'
			default:
				row[c] = empty
			}
		}
		rows[r] = string(row)
	}
	return rows
}

// Diagram draws p for people: column letters, row numbers, X for black,
// O for white, . for empty, and the side to move.
func (b *Board) Diagram(p Position) string {
	var sb strings.Builder
	sb.WriteString(" ")
	for c := 0; c < b.size; c++ {
		sb.WriteByte(' ')
		sb.WriteByte(byte('a' + c))
	}
	sb.WriteByte('\n')
	for r, row := range b.Rows(p, '.') {
		sb.WriteByte(byte('1' + r))
		for _, ch := range []byte(row) {
			sb.WriteByte(' ')
			sb.WriteByte(ch)
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "%s to move\n", p.Side)
	return sb.String()
}

package solve

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/board"
)

// ErrSyntax reports a position line that ParsePosition cannot read.
var ErrSyntax = errors.New("solve: bad position line")

// ParsePosition reads a position line: the board's squares in row order
// (a1 b1 ... then a2 ...), 16, 36 or 64 of them for the 4x4, 6x6 or 8x8
// board, each X (black), O (white) or - (empty), letters in either case;
// then white space and X or O for the side to move. Anything after that is
// ignored, so lines may carry scores or names. It returns the board the square count implies.
func ParsePosition(line string) (*board.Board, board.Position, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return nil, board.Position{}, fmt.Errorf("%w: want squares, then the side to move (X or O)", ErrSyntax)
	}
	sq, side := fields[0], fields[1]
	var size int
	switch len(sq) {
	case 16:
		size = 4
	case 36:
		size = 6
	case 64:
		size = 8
	default:
		return nil, board.Position{}, fmt.Errorf("%w: %d squares, want 16, 36 or 64", ErrSyntax, len(sq))
	}
	b := board.MustNew(size)
	var p board.Position
	for i := 0; i < len(sq); i++ {
		bit := uint64(1) << uint(i/size*8+i%size)
		switch sq[i] {
		case 'X', 'x':
			p.Occ |= bit
		case 'O', 'o':
			p.Occ |= bit
			p.White |= bit
		case '-':
		default:
			return nil, board.Position{}, fmt.Errorf("%w: square %d is %q, want X, O or -", ErrSyntax, i+1, sq[i])
		}
	}
	switch side {
	case "X", "x":
		p.Side = board.Black
	case "O", "o":
		p.Side = board.White
	default:
		return nil, board.Position{}, fmt.Errorf("%w: side to move %q, want X or O", ErrSyntax, side)
	}
	return b, p, nil
}

// FormatPosition writes p as ParsePosition reads it: the squares of b in
// row order, X black, O white and - empty, then the side to move.
func FormatPosition(b *board.Board, p board.Position) string {
	side := " X"
	if p.Side == board.White {
		side = " O"
	}
	return strings.Join(b.Rows(p, '-'), "") + side
}

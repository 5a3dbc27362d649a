// Package lines finds the discs a move flips a line at a time, in
// board's 8x8 frame (square (column c, row r) is bit r*8+c, a smaller
// board the frame's top-left corner): the four lines through a square
// are each read into a byte (bit i for the line's i-th square, in column
// order, or row order for a column), two tables of 8 x 256 bytes give
// the line's flipped discs, and the byte is written back into the
// frame. Rows are read with a shift; columns and diagonals gather their
// squares into the top byte with a multiplication whose partial products
// never overlap (each square of the line lands in its own bit), and are
// written back the same way. Off-board squares hold neither colour, so
// runs stop at the board's edge whatever its size.
//
// It serves board's move generation and the solver's search, which both
// flip discs for every move they play: about half the time of following
// the eight rays from the square one by one (docs/performance.md).
package lines

// Flips returns the discs of opp that a disc of own on the empty square
// sq flips: 0 if the move flips nothing, and so is not legal.
func Flips(sq int, own, opp uint64) uint64 {
	// Masked, the shifts need no check for counts of 64 or more.
	c, row := uint(sq)&7, uint(sq)&56
	f := uint64(Line(c, uint8(own>>row), uint8(opp>>row))) << row
	f |= (uint64(Line(row>>3, ColByte(own, c), ColByte(opp, c))) * byteToCol & colA) << c
	d := &diagonals[sq&63]
	return f | diagonalFlips(c, own, opp, d[0]) | diagonalFlips(c, own, opp, d[1])
}

// diagonalFlips is Flips along the diagonal d through the square at
// column c.
func diagonalFlips(c uint, own, opp, d uint64) uint64 {
	return uint64(Line(c, DiagByte(own, d), DiagByte(opp, d))) * colA & d
}

// Line returns the discs that a disc played at place i of a line flips,
// as a byte: own and opp are the line's bytes.
func Line(i uint, own, opp uint8) uint8 {
	return flipped[i&7][outflank[i&7][opp]&own]
}

// ColByte reads column c of x into a byte, row r at bit r.
func ColByte(x uint64, c uint) uint8 { return uint8((x >> c & colA) * colToByte >> 56) }

// DiagByte reads the squares of x on the diagonal d into a byte, each at
// its column's bit.
func DiagByte(x, d uint64) uint8 { return uint8((x & d) * colA >> 56) }

// Diagonals returns the diagonal (towards h8) and the anti-diagonal
// (towards a8) through square sq. A square's place on its row and on
// both diagonals (read in column order) is its column, on its column its
// row.
func Diagonals(sq int) (diagonal, anti uint64) {
	d := &diagonals[sq&63]
	return d[0], d[1]
}

const (
	colA uint64 = 0x0101010101010101
	// colToByte gathers column a (bits 0, 8, ..., 56) into the top byte,
	// row r at bit 56+r.
	colToByte uint64 = 0x0102040810204080
	// byteToCol spreads bits 1 to 6 of a byte down column a, bit r to row
	// r. Bits 0 and 7 would overlap; a flipped disc is never at a line's
	// end, so they are never set.
	byteToCol uint64 = 0x0002040810204081
)

// diagonals[sq] holds the diagonal and the anti-diagonal through sq.
var diagonals [64][2]uint64

// outflank[i][o] holds, for a disc played at place i of a line whose
// opponent discs are the byte o, the places just past the opponent's runs
// next to i on either side: where the mover needs a disc for the run to
// flip. flipped[i][b] holds the places strictly between i and those of b.
var outflank, flipped [8][256]uint8

func init() {
	for sq := range diagonals {
		c, r := sq%8, sq/8
		for t := -7; t <= 7; t++ {
			if c+t >= 0 && c+t < 8 && r+t >= 0 && r+t < 8 {
				diagonals[sq][0] |= 1 << uint((r+t)*8+c+t)
			}
			if c-t >= 0 && c-t < 8 && r+t >= 0 && r+t < 8 {
				diagonals[sq][1] |= 1 << uint((r+t)*8+c-t)
			}
		}
	}
	for i := range 8 {
		for b := range 256 {
			for _, d := range [2]int{-1, 1} {
				// As an opponent byte: skip the run next to i.
				j := i + d
				for j >= 0 && j < 8 && b>>uint(j)&1 != 0 {
					j += d
				}
				if j >= 0 && j < 8 && j != i+d {
					outflank[i][b] |= 1 << uint(j)
				}
				// As outflanking places: the run up to the first one,
				// if there is one on this side.
				var run uint8
				k := i + d
				for ; k >= 0 && k < 8 && b>>uint(k)&1 == 0; k += d {
					run |= 1 << uint(k)
				}
				if k >= 0 && k < 8 {
					flipped[i][b] |= run
				}
			}
		}
	}
}

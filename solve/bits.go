package solve

import (
	"math/bits"

	"github.com/reversi-cloud/reversi/board/lines"
)

// The solver works on (mover, opponent) masks in board's 8x8 frame: square
// (column c, row r) is bit r*8+c whatever the board size, and a smaller
// board is the top-left corner of the frame. Off-board squares are never
// occupied, so the 8x8 wrap masks and the board's empty mask are all the
// move generator needs to serve every size.

// notEdgeCols is the frame without columns a and h: a run of discs that
// changes column may not pass through either edge column. A variable, not
// a constant: with a constant the compiler applies the mask again at
// every use of the masked discs in moves, one instruction each time.
var notEdgeCols uint64 = 0x7e7e7e7e7e7e7e7e

// movesUp returns the squares reached by stepping s bits up from own
// through runs of opp, one step past the run: candidate moves along one
// direction. The runs are grown by doubling: after two single steps, each
// step through pairs of opp discs (pair) adds two squares, so four steps
// cover the longest run an 8x8 line can hold (six). Small enough to be
// inlined, so that s is a constant and each shift one instruction.
func movesUp(own, opp uint64, s uint) uint64 {
	pair := opp & (opp << s)
	t := opp & (own << s)
	t |= opp & (t << s)
	t |= pair & (t << (2 * s))
	t |= pair & (t << (2 * s))
	return t << s
}

// movesDown is movesUp stepping down.
func movesDown(own, opp uint64, s uint) uint64 {
	pair := opp & (opp >> s)
	t := opp & (own >> s)
	t |= opp & (t >> s)
	t |= pair & (t >> (2 * s))
	t |= pair & (t >> (2 * s))
	return t >> s
}

// movesScalar returns the legal squares of own among empty, one direction
// at a time: moves, where the build has no vector version (moves_simd.go).
func movesScalar(own, opp, empty uint64) uint64 {
	inner := opp & notEdgeCols
	return (movesUp(own, inner, 1) | movesDown(own, inner, 1) |
		movesUp(own, opp, 8) | movesDown(own, opp, 8) |
		movesUp(own, inner, 7) | movesDown(own, inner, 7) |
		movesUp(own, inner, 9) | movesDown(own, inner, 9)) & empty
}

// Flips are found a line at a time (package lines).

// lastCount[i][b] is how many discs a disc played at place i of a full
// line flips, the mover's discs being the byte b and every other place the
// opponent's. Off-board places read as the opponent's, but they lie past
// the board's squares at a line's ends, so no run stops at one.
var lastCount [8][256]uint8

func init() {
	for i := range lastCount {
		for b := range lastCount[i] {
			opp := ^uint8(b) &^ (1 << uint(i))
			lastCount[i][b] = uint8(bits.OnesCount8(lines.Line(uint(i), uint8(b), opp)))
		}
	}
}

// lastFlips returns how many discs own flips by playing sq when every
// other square of the board is occupied: with one empty square left, the
// opponent's discs need not be read.
func lastFlips(sq int, own uint64) int {
	c, row := uint(sq)&7, uint(sq)&56
	diagonal, anti := lines.Diagonals(sq)
	return int(lastCount[c][uint8(own>>row)]) +
		int(lastCount[row>>3][lines.ColByte(own, c)]) +
		int(lastCount[c][lines.DiagByte(own, diagonal)]) +
		int(lastCount[c][lines.DiagByte(own, anti)])
}

// neighbours[sq] holds the squares next to sq in the frame.
var neighbours [64]uint64

func init() {
	for sq := range neighbours {
		for d := range steps {
			neighbours[sq] |= step(1<<uint(sq), d)
		}
	}
}

// flips returns the discs of opp that own flips by playing the empty square
// sq: 0 if the move is not legal. Most squares that the last-moves code
// tries have no opponent disc next to them, so that is checked first.
func flips(sq int, own, opp uint64) uint64 {
	if neighbours[sq]&opp == 0 {
		return 0
	}
	return lines.Flips(sq, own, opp)
}

// geometry is what the search needs to know about one board size.
type geometry struct {
	squares int    // squares on the board: the score range is -squares..squares
	mask    uint64 // squares on the board
	corners uint64
	// quadrants are the four quadrant masks: parity ordering plays first
	// in quadrants with an odd number of empties.
	quadrants [4]uint64
	// edge[d] holds the squares whose neighbour in direction d (as in rays)
	// is off the board; shift[d] and wrap[d] step a mask one square in
	// direction d (see step).
	edge [8]uint64
	// cornerSq[i] is a corner, xSq[i] the square diagonally next to it and
	// cSq[i] the two edge squares next to it; edges holds the other edge
	// squares. The evaluation counts them.
	cornerSq, xSq, cSq [4]uint64
	edges              uint64
}

// steps are the bit offsets of the directions of rays, with the columns a
// step may land on without wrapping round the frame.
var steps = [8]struct {
	delta int
	land  uint64
}{
	{1, ^colA}, {7, ^colH}, {8, ^uint64(0)}, {9, ^colA},
	{-1, ^colH}, {-7, ^colA}, {-8, ^uint64(0)}, {-9, ^colH},
}

const (
	colA uint64 = 0x0101010101010101
	colH uint64 = 0x8080808080808080
)

// step moves every square of x one square in direction d.
func step(x uint64, d int) uint64 {
	s := steps[d]
	if s.delta > 0 {
		return x << uint(s.delta) & s.land
	}
	return x >> uint(-s.delta) & s.land
}

var geometries = map[int]*geometry{4: newGeometry(4), 6: newGeometry(6), 8: newGeometry(8)}

func newGeometry(n int) *geometry {
	g := &geometry{squares: n * n}
	h := n / 2
	var quads [4]uint64
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			bit := uint64(1) << uint(r*8+c)
			g.mask |= bit
			q := 0
			if c >= h {
				q |= 1
			}
			if r >= h {
				q |= 2
			}
			quads[q] |= bit
		}
	}
	g.quadrants = quads
	for d := range steps {
		g.edge[d] = g.mask &^ step(g.mask, (d+4)%8)
	}
	last := n - 1
	g.corners = 1 | 1<<uint(last) | 1<<uint(8*last) | 1<<uint(8*last+last)
	// The edge squares that are neither corners nor next to one (C).
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			dc, dr := min(c, last-c), min(r, last-r)
			if (dc == 0 || dr == 0) && max(dc, dr) > 1 {
				g.edges |= 1 << uint(r*8+c)
			}
		}
	}
	for i, c := range [4][2]int{{0, 0}, {last, 0}, {0, last}, {last, last}} {
		in := [2]int{1, 1} // the step from the corner towards the board
		for a := range in {
			if c[a] != 0 {
				in[a] = -1
			}
		}
		sq := func(col, row int) uint64 { return 1 << uint(row*8+col) }
		g.cornerSq[i] = sq(c[0], c[1])
		g.xSq[i] = sq(c[0]+in[0], c[1]+in[1])
		g.cSq[i] = sq(c[0]+in[0], c[1]) | sq(c[0], c[1]+in[1])
	}
	return g
}

// score is the final score for own when the game ends: the disc
// differential, empty squares going to the winner.
func (g *geometry) score(own, opp uint64) int {
	p, o := bits.OnesCount64(own), bits.OnesCount64(opp)
	switch {
	case p > o:
		return g.squares - 2*o
	case p < o:
		return 2*p - g.squares
	}
	return 0
}

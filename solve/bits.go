package solve

import "math/bits"

// The solver works on (mover, opponent) masks in board's 8x8 frame: square
// (column c, row r) is bit r*8+c whatever the board size, and a smaller
// board is the top-left corner of the frame. Off-board squares are never
// occupied, so the 8x8 wrap masks and the board's empty mask are all the
// move generator needs to serve every size.

// notEdgeCols is the frame without columns a and h: a run of discs that
// changes column may not pass through either edge column.
const notEdgeCols uint64 = 0x7e7e7e7e7e7e7e7e

// shiftBoth returns the squares reached by stepping s bits up and down from
// own through runs of opp, one step past the run: candidate moves along one
// line. The runs are grown by doubling: after two single steps, each step
// through pairs of opp discs (pair) adds two squares, so four steps cover
// the longest run an 8x8 line can hold (six).
func shiftBoth(own, opp uint64, s uint) uint64 {
	pair := opp & (opp << s)
	t := opp & (own << s)
	t |= opp & (t << s)
	t |= pair & (t << (2 * s))
	t |= pair & (t << (2 * s))
	pair = opp & (opp >> s)
	u := opp & (own >> s)
	u |= opp & (u >> s)
	u |= pair & (u >> (2 * s))
	u |= pair & (u >> (2 * s))
	return t<<s | u>>s
}

// moves returns the legal squares of own among empty.
func moves(own, opp, empty uint64) uint64 {
	inner := opp & notEdgeCols
	return (shiftBoth(own, inner, 1) | shiftBoth(own, opp, 8) |
		shiftBoth(own, inner, 7) | shiftBoth(own, inner, 9)) & empty
}

// rays[sq] holds the squares of the frame beyond sq in each direction,
// nearest first: the first four directions go to higher bit indices
// (east, south-west, south, south-east), the last four to lower ones.
var rays [64][8]uint64

func init() {
	dirs := [8][2]int{{1, 0}, {-1, 1}, {0, 1}, {1, 1}, {-1, 0}, {1, -1}, {0, -1}, {-1, -1}}
	for sq := 0; sq < 64; sq++ {
		for d, v := range dirs {
			c, r := sq%8+v[0], sq/8+v[1]
			for c >= 0 && c < 8 && r >= 0 && r < 8 {
				rays[sq][d] |= 1 << uint(r*8+c)
				c, r = c+v[0], r+v[1]
			}
		}
	}
}

// flipUp returns the run of opp that a ray towards higher indices brackets
// with own: the run up to the ray's first square not held by opp, if that
// square holds own. Off-board squares are in notOpp and never in own, so
// runs stop at the board's edge.
func flipUp(ray, own, notOpp uint64) uint64 {
	x := ray & notOpp
	first := x & -x
	f := (first - 1) & ray
	if first&own == 0 {
		f = 0
	}
	return f
}

// flipDown is flipUp for a ray towards lower indices: its first square is
// the highest one not held by opp (none when x is 0: the shift by 64 or
// more gives 0).
func flipDown(ray, own, notOpp uint64) uint64 {
	x := ray & notOpp
	first := uint64(1) << uint(63-bits.LeadingZeros64(x))
	f := ray &^ (first<<1 - 1)
	if first&own == 0 {
		f = 0
	}
	return f
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
	r := &rays[sq]
	n := ^opp
	return flipUp(r[0], own, n) | flipUp(r[1], own, n) | flipUp(r[2], own, n) | flipUp(r[3], own, n) |
		flipDown(r[4], own, n) | flipDown(r[5], own, n) | flipDown(r[6], own, n) | flipDown(r[7], own, n)
}

// geometry is what the search needs to know about one board size.
type geometry struct {
	squares int    // squares on the board: the score range is -squares..squares
	mask    uint64 // squares on the board
	corners uint64
	// quadrant[sq] is the quadrant mask holding sq: parity ordering plays
	// first in quadrants with an odd number of empties.
	quadrant [64]uint64
	// priority lists the board's squares in classes, best first (corners,
	// then edges and the inside, X- and C-squares last): the order in which
	// moves are tried where no search-based ordering pays for itself.
	priority []uint64
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
	for sq := 0; sq < 64; sq++ {
		for _, q := range quads {
			if q>>uint(sq)&1 != 0 {
				g.quadrant[sq] = q
			}
		}
	}
	for d := range steps {
		g.edge[d] = g.mask &^ step(g.mask, (d+4)%8)
	}
	last := n - 1
	g.corners = 1 | 1<<uint(last) | 1<<uint(8*last) | 1<<uint(8*last+last)
	// Classes by distance to the nearest corner along each axis: the
	// corner itself, squares next to a corner (C and X) last.
	var corner, edgeFar, inner, next uint64
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			bit := uint64(1) << uint(r*8+c)
			dc, dr := min(c, last-c), min(r, last-r)
			switch {
			case dc == 0 && dr == 0:
				corner |= bit
			case dc <= 1 && dr <= 1:
				next |= bit
			case dc == 0 || dr == 0:
				edgeFar |= bit
			default:
				inner |= bit
			}
		}
	}
	g.priority = []uint64{corner, edgeFar, inner, next}
	g.edges = edgeFar
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

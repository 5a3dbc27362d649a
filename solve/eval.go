package solve

import (
	"math/bits"

	"github.com/reversi-cloud/reversi/board/lines"
)

// The evaluation orders moves high in the tree and guesses where the
// root's tests start. It never decides a score, so a poor weight costs
// nodes, never exactness. On 8x8 it is the pattern evaluation of
// pattern.go; on the smaller boards it is a linear function of a few
// features of a position, fitted by least squares to exact scores of 8x8
// positions 14 to 18 empties from the end (see TestEvalWeights, which
// writes eval_weights.go). The full stability of stable.go
// ordered better but cost more time than it saved; stability along the
// edges, read from a table, keeps most of the gain.

// Features of a position for the side to move, each own's count minus the
// opponent's unless said otherwise.
const (
	fBias       = iota // 1
	fDiscs             // discs
	fMobility          // legal moves
	fCornerMob         // legal moves onto corners
	fPotential         // empty squares next to the other side's discs
	fCorners           // corners held
	fXSquares          // X-squares held next to an empty corner
	fCSquares          // C-squares held next to an empty corner
	fEdges             // edge squares held, not corners or C-squares
	fEdgeStable        // stable discs on the edges (corners count twice)
	fFrontier          // discs next to an empty square
	fParity            // 1 when the empties are odd (own gets the last move)
	nFeatures
)

// evalScale is the evaluation's unit: evalScale is one disc of score.
const evalScale = 64

// features fills f with the features of own to move against opp, and
// reports whether neither side can move (the game is over).
func (g *geometry) features(own, opp uint64, f *[nFeatures]int) (over bool) {
	empty := g.mask &^ (own | opp)
	count := func(x uint64) int { return bits.OnesCount64(x) }
	diff := func(a, b uint64) int { return count(a) - count(b) }
	ml, ol := moves(own, opp, empty), moves(opp, own, empty)
	xs, cs := g.openSquares(empty)
	f[fBias] = 1
	f[fDiscs] = diff(own, opp)
	f[fMobility] = diff(ml, ol)
	f[fCornerMob] = diff(ml&g.corners, ol&g.corners)
	f[fPotential] = diff(adjacent(opp)&empty, adjacent(own)&empty)
	f[fCorners] = diff(own&g.corners, opp&g.corners)
	f[fXSquares] = diff(own&xs, opp&xs)
	f[fCSquares] = diff(own&cs, opp&cs)
	f[fEdges] = diff(own&g.edges, opp&g.edges)
	f[fEdgeStable] = edgeStability(own, opp)
	front := adjacent(empty)
	f[fFrontier] = diff(own&front, opp&front)
	f[fParity] = count(empty) & 1
	return ml|ol == 0
}

// eval is the evaluation of own to move against opp, in evalScale units:
// the exact score when neither side can move.
func (g *geometry) eval(own, opp uint64) int {
	if g.squares == 64 {
		return patternEval(g, own, opp)
	}
	return g.linearEval(own, opp)
}

// linearEval is the linear evaluation of own to move against opp, which
// the smaller boards use (and the games that make the 8x8 training
// positions).
func (g *geometry) linearEval(own, opp uint64) int {
	var f [nFeatures]int
	if g.features(own, opp, &f) {
		return evalScale * g.score(own, opp)
	}
	v := 0
	for i, w := range evalWeights {
		v += w * f[i]
	}
	return v
}

// openSquares returns the X-squares (diagonally next to a corner) and the
// C-squares (on an edge next to a corner) whose corner is empty.
func (g *geometry) openSquares(empty uint64) (x, c uint64) {
	for i, corner := range g.cornerSq {
		if empty&corner != 0 {
			x |= g.xSq[i]
			c |= g.cSq[i]
		}
	}
	return x, c
}

// edgeStable[own<<8|opp] is own's stable discs minus opp's on an edge of
// the 8x8 board, given as 8-bit lines: discs in a run of one colour from a
// corner, or every disc of a full edge. An edge disc can only be flipped
// along its edge, so these are stable on the board too. (On the smaller
// boards the frame's top row and left column see only the runs from a1,
// and the other two edges nothing: a weaker feature, as sound.)
var edgeStable [1 << 16]int8

func init() {
	for own := range 256 {
		for opp := range 256 {
			if own&opp == 0 {
				edgeStable[own<<8|opp] = int8(lineStable(uint8(own), uint8(opp)))
			}
		}
	}
}

// lineStable is edgeStable's entry for one line.
func lineStable(own, opp uint8) int {
	if own|opp == 0xff {
		return bits.OnesCount8(own) - bits.OnesCount8(opp)
	}
	var st [2]uint8 // own's and opp's stable discs
	for _, end := range [2]int{0, 7} {
		for i, x := range [2]uint8{own, opp} {
			for sq := end; sq >= 0 && sq < 8 && x>>uint(sq)&1 != 0; sq += 1 - end/7*2 {
				st[i] |= 1 << uint(sq)
			}
		}
	}
	return bits.OnesCount8(st[0]) - bits.OnesCount8(st[1])
}

// edgeStability sums edgeStable over the four edges of the 8x8 board.
func edgeStability(own, opp uint64) int {
	col := func(x uint64, c uint) uint64 { return uint64(lines.ColByte(x, c)) }
	return int(edgeStable[(own&0xff)<<8|opp&0xff]) + int(edgeStable[(own>>56)<<8|opp>>56]) +
		int(edgeStable[col(own, 0)<<8|col(opp, 0)]) + int(edgeStable[col(own, 7)<<8|col(opp, 7)])
}

package solve

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/board/lines"
)

// The 8x8 evaluation sums weights looked up by the contents of a few
// shapes of squares (patterns): a corner's 3x3 block, a corner's 2x5
// block, an edge with its two X-squares, the other lines parallel to an
// edge and the diagonals, at every place each shape fits on the board (46
// instances), plus a few linear features that shapes of a few squares
// cannot see, such as mobility. A shape and its mirror image share
// weights, so the evaluation is the same for the eight images of a
// position. The weights are fitted to positions the solver has solved
// (TestPatternWeights); the smaller boards keep the linear evaluation of
// eval.go.
//
// A shape's contents are a number in base 3, one digit a square in the
// order of patternSquares: 0 empty, 1 own disc, 2 opponent disc. A
// reader collects a shape's squares of a bitboard into the low bits of a
// word in that order, and ternary turns such a word into base 3, so that a
// shape's index is ternary[read(own)] + 2*ternary[read(opp)]. Every place
// of a shape is the shape at a1 in one orientation of the board, so the
// readers need only know the a1 corner. patternScore reads every place
// once, written out for speed; the tests list the places (instances) and
// read them the slow way, and check that the two agree.

// Pattern shapes, each anchored at a1 in the board's first orientation.
const (
	pCorner33 = iota // a1-c3
	pCorner25        // a1-e2
	pEdge2X          // a1-h1, b2, g2
	pLine2           // a2-h2
	pLine3           // a3-h3
	pLine4           // a4-h4
	pDiag8           // a1-h8
	pDiag7           // b1-h7
	pDiag6           // c1-h6
	pDiag5           // d1-h5
	pDiag4           // e1-h4
	nPatterns
)

// patternSquares lists each shape's squares, the first the lowest digit.
var patternSquares = [nPatterns][]int{
	pCorner33: {0, 1, 2, 8, 9, 10, 16, 17, 18},
	pCorner25: {0, 1, 2, 3, 4, 8, 9, 10, 11, 12},
	pEdge2X:   {0, 1, 2, 3, 4, 5, 6, 7, 9, 14},
	pLine2:    {8, 9, 10, 11, 12, 13, 14, 15},
	pLine3:    {16, 17, 18, 19, 20, 21, 22, 23},
	pLine4:    {24, 25, 26, 27, 28, 29, 30, 31},
	pDiag8:    {0, 9, 18, 27, 36, 45, 54, 63},
	pDiag7:    {1, 10, 19, 28, 37, 46, 55},
	pDiag6:    {2, 11, 20, 29, 38, 47},
	pDiag5:    {3, 12, 21, 30, 39},
	pDiag4:    {4, 13, 22, 31},
}

// patternSize[k] is the number of contents of shape k, 3^squares.
var patternSize [nPatterns]int

// ternary[m] reads the bits of m as base-3 digits.
var ternary [1 << 10]uint16

func init() {
	for k, sqs := range patternSquares {
		patternSize[k] = 1
		for range sqs {
			patternSize[k] *= 3
		}
	}
	for m := range ternary {
		v, p := 0, 1
		for i := range 10 {
			if m>>uint(i)&1 != 0 {
				v += p
			}
			p *= 3
		}
		ternary[m] = uint16(v)
	}
}

// The readers collect one shape's squares of a bitboard, in the
// orientation it is given in, into the low bits of a word.
func readCorner33(x uint64) uint       { return uint(x&7 | x>>5&0x38 | x>>10&0x1c0) }
func readCorner25(x uint64) uint       { return uint(x&0x1f | x>>3&0x3e0) }
func readEdge2X(x uint64) uint         { return uint(x&0xff | x>>1&0x100 | x>>5&0x200) }
func readLine(x uint64, row uint) uint { return uint(x >> (8 * row) & 0xff) }

// readDiag reads the squares of x on a diagonal parallel to a1-h8 that
// starts at column col of the first row (mask holds its squares).
func readDiag(x, mask uint64, col uint) uint { return uint(lines.DiagByte(x, mask)) >> col }

// The diagonals of the shapes, each parallel to a1-h8 from the first row.
const (
	diag8 = 0x8040201008040201 // a1-h8
	diag7 = 0x0080402010080402 // b1-h7
	diag6 = 0x0000804020100804 // c1-h6
	diag5 = 0x0000008040201008 // d1-h5
	diag4 = 0x0000000080402010 // e1-h4
)

// The linear features the 8x8 evaluation adds to its patterns: what
// patterns of a few squares cannot see. Each is own's count minus the
// opponent's unless said otherwise.
const (
	lBias      = iota // 1
	lMobility         // legal moves
	lCornerMob        // legal moves onto corners
	lPotential        // empty squares next to the other side's discs
	lFrontier         // discs next to an empty square
	lParity           // 1 when the empties are odd (own gets the last move)
	nLinear
)

// linearFeatures fills f for own to move against opp, given the empty
// squares and both sides' legal moves.
func linearFeatures(own, opp, empty, ml, ol uint64, f *[nLinear]int) {
	const corners = 1 | 1<<7 | 1<<56 | 1<<63
	diff := func(a, b uint64) int { return bits.OnesCount64(a) - bits.OnesCount64(b) }
	front := adjacent(empty)
	f[lBias] = 1
	f[lMobility] = diff(ml, ol)
	f[lCornerMob] = diff(ml&corners, ol&corners)
	f[lPotential] = diff(adjacent(opp)&empty, adjacent(own)&empty)
	f[lFrontier] = diff(own&front, opp&front)
	f[lParity] = bits.OnesCount64(empty) & 1
}

// patternWeights[k][i] is the weight of shape k holding contents i, and
// patternLinear the weights of the linear features, in evalScale units:
// read from eval_patterns.bin, written by TestPatternWeights.
var (
	patternWeights [nPatterns][]int16
	patternLinear  [nLinear]int
)

//go:embed eval_patterns.bin
var patternBin []byte

// The weights file is gzip-compressed little-endian int16s: the linear
// weights, then every shape's weights in order.
func init() {
	zr, err := gzip.NewReader(bytes.NewReader(patternBin))
	if err != nil {
		panic(fmt.Sprintf("solve: eval_patterns.bin: %v", err))
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		panic(fmt.Sprintf("solve: eval_patterns.bin: %v", err))
	}
	want := nLinear
	for _, n := range patternSize {
		want += n
	}
	if len(raw) != 2*want {
		panic(fmt.Sprintf("solve: eval_patterns.bin holds %d weights, want %d", len(raw)/2, want))
	}
	next := func() int16 {
		v := int16(binary.LittleEndian.Uint16(raw))
		raw = raw[2:]
		return v
	}
	for j := range patternLinear {
		patternLinear[j] = int(next())
	}
	for k, n := range patternSize {
		patternWeights[k] = make([]int16, n)
		for i := range n {
			patternWeights[k][i] = next()
		}
	}
}

// patternEval is the evaluation of own to move against opp on the 8x8
// board, in evalScale units: the exact score when neither side can move.
func patternEval(g *geometry, own, opp uint64) int {
	empty := ^(own | opp)
	ml, ol := moves(own, opp, empty), moves(opp, own, empty)
	if ml|ol == 0 {
		return evalScale * g.score(own, opp)
	}
	var f [nLinear]int
	linearFeatures(own, opp, empty, ml, ol, &f)
	v := patternScore(own, opp)
	for i, w := range patternLinear {
		v += w * f[i]
	}
	return v
}

// The transposed orientations (4 to 7) are read from the untransposed
// ones, column by column: row r of a transposed board is column r of the
// board, and its diagonals from the first row are the board's from the
// first column. Their diagonals' squares:
const (
	diag7T = 0x4020100804020100 // a2-g8
	diag6T = 0x2010080402010000 // a3-f8
	diag5T = 0x1008040201000000 // a4-e8
	diag4T = 0x0804020100000000 // a5-d8
)

func readCorner25T(x uint64) uint {
	return uint(lines.ColByte(x, 0)&31) | uint(lines.ColByte(x, 1)&31)<<5
}
func readEdge2XT(x uint64) uint {
	return uint(lines.ColByte(x, 0)) | uint(x>>9&1)<<8 | uint(x>>49&1)<<9
}
func readLineT(x uint64, col uint) uint { return uint(lines.ColByte(x, col)) }

// patternScore is the patterns' part of the 8x8 evaluation of own to move
// against opp: the sum over instances, written out by orientation.
func patternScore(own, opp uint64) int {
	// Orientations 0 to 3; 4 to 7 are their transposes.
	ov, pv := bits.ReverseBytes64(own), bits.ReverseBytes64(opp)
	oh, ph := board.MirrorHorizontal(own), board.MirrorHorizontal(opp)
	o := [4]uint64{own, ov, oh, bits.ReverseBytes64(oh)}
	p := [4]uint64{opp, pv, ph, bits.ReverseBytes64(ph)}
	w := &patternWeights
	t := &ternary
	at := func(k int, a, b uint) int { return int(w[k][int(t[a])+2*int(t[b])]) }
	v := 0
	for i := range 4 {
		x, y := o[i], p[i]
		v += at(pCorner25, readCorner25(x), readCorner25(y)) + at(pCorner25, readCorner25T(x), readCorner25T(y)) +
			at(pCorner33, readCorner33(x), readCorner33(y))
	}
	for i := range 2 {
		x, y := o[i], p[i]
		v += at(pEdge2X, readEdge2X(x), readEdge2X(y)) + at(pLine2, readLine(x, 1), readLine(y, 1)) +
			at(pLine3, readLine(x, 2), readLine(y, 2)) + at(pLine4, readLine(x, 3), readLine(y, 3))
		// Orientations 4 and 6: the transposes of 0 and 2.
		x, y = o[2*i], p[2*i]
		v += at(pEdge2X, readEdge2XT(x), readEdge2XT(y)) + at(pLine2, readLineT(x, 1), readLineT(y, 1)) +
			at(pLine3, readLineT(x, 2), readLineT(y, 2)) + at(pLine4, readLineT(x, 3), readLineT(y, 3))
	}
	for i := range 3 {
		x, y := o[i], p[i]
		v += at(pDiag7, readDiag(x, diag7, 1), readDiag(y, diag7, 1)) + at(pDiag6, readDiag(x, diag6, 2), readDiag(y, diag6, 2)) +
			at(pDiag5, readDiag(x, diag5, 3), readDiag(y, diag5, 3)) + at(pDiag4, readDiag(x, diag4, 4), readDiag(y, diag4, 4))
	}
	// Orientation 4, the transpose of 0.
	v += at(pDiag7, readDiag(own, diag7T, 0), readDiag(opp, diag7T, 0)) + at(pDiag6, readDiag(own, diag6T, 0), readDiag(opp, diag6T, 0)) +
		at(pDiag5, readDiag(own, diag5T, 0), readDiag(opp, diag5T, 0)) + at(pDiag4, readDiag(own, diag4T, 0), readDiag(opp, diag4T, 0))
	for i := range 2 {
		v += at(pDiag8, readDiag(o[i], diag8, 0), readDiag(p[i], diag8, 0))
	}
	return v
}

package solve

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// shapeIndex is the index of shape k in own and opp, both in the same
// orientation.
func shapeIndex(k int, own, opp uint64) int {
	var o, p uint
	switch k {
	case pCorner33:
		o, p = readCorner33(own), readCorner33(opp)
	case pCorner25:
		o, p = readCorner25(own), readCorner25(opp)
	case pEdge2X:
		o, p = readEdge2X(own), readEdge2X(opp)
	case pLine2, pLine3, pLine4:
		r := uint(k - pLine2 + 1)
		o, p = readLine(own, r), readLine(opp, r)
	case pDiag8:
		o, p = readDiag(own, diag8, 0), readDiag(opp, diag8, 0)
	case pDiag7:
		o, p = readDiag(own, diag7, 1), readDiag(opp, diag7, 1)
	case pDiag6:
		o, p = readDiag(own, diag6, 2), readDiag(opp, diag6, 2)
	case pDiag5:
		o, p = readDiag(own, diag5, 3), readDiag(opp, diag5, 3)
	default:
		o, p = readDiag(own, diag4, 4), readDiag(opp, diag4, 4)
	}
	return int(ternary[o]) + 2*int(ternary[p])
}

// An instance is one place of a shape on the board: the shape read in one
// orientation. The orientations of instanceOrient read each place of a
// shape once: the 8 corner 2x5 blocks, the 4 corner 3x3 blocks, the 4
// edges and 4 lines of each other row, both long diagonals, and the 4 of
// each shorter length.
var instanceOrient = [nPatterns][]int{
	pCorner33: {0, 1, 2, 3},
	pCorner25: {0, 1, 2, 3, 4, 5, 6, 7},
	pEdge2X:   {0, 1, 4, 6},
	pLine2:    {0, 1, 4, 6},
	pLine3:    {0, 1, 4, 6},
	pLine4:    {0, 1, 4, 6},
	pDiag8:    {0, 1},
	pDiag7:    {0, 1, 2, 4},
	pDiag6:    {0, 1, 2, 4},
	pDiag5:    {0, 1, 2, 4},
	pDiag4:    {0, 1, 2, 4},
}

// nInstances counts the instances of every shape.
const nInstances = 46

// instance is one shape in one orientation.
type instance struct{ shape, orient int }

// instances lists every instance, by shape.
var instances = func() []instance {
	var in []instance
	for k, os := range instanceOrient {
		for _, o := range os {
			in = append(in, instance{k, o})
		}
	}
	if len(in) != nInstances {
		panic("solve: nInstances is wrong")
	}
	return in
}()

// orientations returns x in the eight orientations of the board: as it is,
// mirrored top to bottom, left to right, both, and those four transposed.
func orientations(x uint64) [8]uint64 {
	v := bits.ReverseBytes64(x)
	h := board.MirrorHorizontal(x)
	vh := bits.ReverseBytes64(h)
	t := board.FlipDiagonal
	return [8]uint64{x, v, h, vh, t(x), t(v), t(h), t(vh)}
}

// patternIndexes fills idx with the index of every instance of own to
// move against opp, in the order of instances.
func patternIndexes(own, opp uint64, idx *[nInstances]uint16) {
	oo, po := orientations(own), orientations(opp)
	for i, in := range instances {
		idx[i] = uint16(shapeIndex(in.shape, oo[in.orient], po[in.orient]))
	}
}

// orientSquare maps a square through orientation t of the board, as
// orientations does to whole bitboards: t&1 mirrors top to bottom, t&2
// left to right, t&4 transposes after both.
func orientSquare(sq, t int) int {
	r, c := sq/8, sq%8
	if t&1 != 0 {
		r = 7 - r
	}
	if t&2 != 0 {
		c = 7 - c
	}
	if t&4 != 0 {
		r, c = c, r
	}
	return r*8 + c
}

// TestPatternIndexes checks the bit tricks of the readers and of
// orientations against reading each instance's squares one by one, that
// no two instances of a shape read the same squares, and that
// patternScore sums every instance.
func TestPatternIndexes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		own := rng.Uint64() & rng.Uint64()
		opp := rng.Uint64() &^ own
		var idx [nInstances]uint16
		patternIndexes(own, opp, &idx)
		seen := map[[2]uint64]bool{} // the squares of each place of each shape
		for i, in := range instances {
			want, p := 0, 1
			var place uint64
			for _, sq := range patternSquares[in.shape] {
				// The oriented board holds at sq what the board holds
				// at the square sq came from.
				from := -1
				for s := range 64 {
					if orientSquare(s, in.orient) == sq {
						from = s
					}
				}
				place |= 1 << uint(from)
				switch {
				case own>>uint(from)&1 != 0:
					want += p
				case opp>>uint(from)&1 != 0:
					want += 2 * p
				}
				p *= 3
			}
			if int(idx[i]) != want {
				t.Fatalf("own %x opp %x: instance %v: index %d, want %d", own, opp, in, idx[i], want)
			}
			key := [2]uint64{uint64(in.shape), place}
			if seen[key] {
				t.Fatalf("instance %v reads the same squares as another", in)
			}
			seen[key] = true
		}
		// The evaluation sums the same instances, written out.
		want := 0
		for i, in := range instances {
			want += int(patternWeights[in.shape][idx[i]])
		}
		if got := patternScore(own, opp); got != want {
			t.Fatalf("own %x opp %x: patternScore %d, want %d", own, opp, got, want)
		}
	}
}

// TestPatternScoreSymmetric: the evaluation reads every orientation, so
// it is the same for the eight images of a position.
func TestPatternScoreSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		own := rng.Uint64() & rng.Uint64()
		opp := rng.Uint64() &^ own
		oo, po := orientations(own), orientations(opp)
		want := patternScore(own, opp)
		for o := range 8 {
			if got := patternScore(oo[o], po[o]); got != want {
				t.Fatalf("own %x opp %x orientation %d: %d, want %d", own, opp, o, got, want)
			}
		}
	}
}

// BenchmarkEval times the evaluation of 8x8 positions from the FFO set's
// games: the patterns and the linear features together.
func BenchmarkEval(b *testing.B) {
	g := geometries[8]
	var ps [][2]uint64
	for _, c := range loadFFO(b) {
		ps = append(ps, [2]uint64{c.p.Mover(), c.p.Opponent()})
	}
	sum := 0
	for i := 0; b.Loop(); i++ {
		p := ps[i%len(ps)]
		sum += g.eval(p[0], p[1])
	}
	if sum == 1 {
		b.Log(sum)
	}
}

// TestFitPatterns checks the fitting on positions whose scores a hidden
// pattern model made: the fit must explain most of what it did not see.
// (The positions are random discs, not games: every shape's contents
// vary, so only the hidden shape explains the scores.)
func TestFitPatterns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	// A weight for each contents of the 4-square diagonal, the same for a
	// contents and its mirror image, as the fit requires.
	var hidden [81]float64
	mirror := shapeMirrors()[pDiag4]
	for i := range hidden {
		if j := int(mirror[i]); j < i {
			hidden[i] = hidden[j]
		} else {
			hidden[i] = float64(rng.IntN(21) - 10)
		}
	}
	score := func(own, opp uint64) float64 {
		var idx [nInstances]uint16
		patternIndexes(own, opp, &idx)
		v := 0.0
		for i, in := range instances {
			if in.shape == pDiag4 {
				v += hidden[idx[i]]
			}
		}
		return v
	}
	var set []evalSample
	var sum, sq float64
	for range 20000 {
		own := rng.Uint64() & rng.Uint64()
		opp := rng.Uint64() &^ own
		v := score(own, opp)
		set = append(set, evalSample{own: own, opp: opp, score: int(v)})
		sum += v
		sq += v * v
	}
	spread := math.Sqrt(sq/float64(len(set)) - (sum/float64(len(set)))*(sum/float64(len(set))))
	_, rms := fitPatterns(set, t.Logf)
	t.Logf("spread %.2f, held-out rms error %.2f", spread, rms)
	if rms > spread/3 {
		t.Errorf("held-out rms error %.2f, want under a third of the scores' spread %.2f", rms, spread)
	}
}

package solve

import "math/bits"

// Masks for fills that change column: a step of one column towards h may
// not land on column a, two steps not on a or b, four not on a to d; and
// the same towards a.
const (
	notA   = ^colA
	notAB  = notA &^ (colA << 1)
	notAD  = notAB &^ (colA<<2 | colA<<3)
	notH   = ^colH
	notGH  = notH &^ (colH >> 1)
	notEH  = notGH &^ (colH>>2 | colH>>3)
	allCol = ^uint64(0)
)

// spreadUp returns x grown along its frame lines towards higher bit
// indices, s bits a step, by doubling: each mask is where a step of one,
// two or four lands without leaving the line.
func spreadUp(x uint64, s uint, m1, m2, m4 uint64) uint64 {
	x |= x << s & m1
	x |= x << (2 * s) & m2
	return x | x<<(4*s)&m4
}

// spreadDown is spreadUp towards lower indices.
func spreadDown(x uint64, s uint, m1, m2, m4 uint64) uint64 {
	x |= x >> s & m1
	x |= x >> (2 * s) & m2
	return x | x>>(4*s)&m4
}

// stable returns a subset of own's discs that can never be flipped: a disc
// is stable when, on each of the four lines through it, the line is full or
// one of its two neighbours on that line is off the board or a stable disc
// of the same colour. Grown from nothing to a fixed point, so the answer is
// sound; it misses some stable discs (those protected by opponent discs
// that are themselves stable), which only makes the bound weaker.
func (g *geometry) stable(own, occ uint64) uint64 {
	// A line is full when no empty square of the board lies on it: the
	// empties spread along each axis mark the lines that are not. The
	// spread may cross off-board squares, but those only lie at a line's
	// ends, so it never reaches another line.
	empty := g.mask &^ occ
	fullH := ^(spreadUp(empty, 1, notA, notAB, notAD) | spreadDown(empty, 1, notH, notGH, notEH))
	fullV := ^(spreadUp(empty, 8, allCol, allCol, allCol) | spreadDown(empty, 8, allCol, allCol, allCol))
	fullD := ^(spreadUp(empty, 9, notA, notAB, notAD) | spreadDown(empty, 9, notH, notGH, notEH))
	fullA := ^(spreadUp(empty, 7, notH, notGH, notEH) | spreadDown(empty, 7, notA, notAB, notAD))
	// Squares with a neighbour off the board on an axis are anchored on
	// it; so are those next to a stable disc on it.
	edgeH, edgeV := g.edge[0]|g.edge[4], g.edge[2]|g.edge[6]
	edgeD, edgeA := g.edge[3]|g.edge[7], g.edge[1]|g.edge[5]
	var st uint64
	for {
		next := own &
			(fullH | edgeH | st<<1&notA | st>>1&notH) &
			(fullV | edgeV | st<<8 | st>>8) &
			(fullD | edgeD | st<<9&notA | st>>9&notH) &
			(fullA | edgeA | st<<7&notH | st>>7&notA)
		if next == st {
			return st
		}
		st = next
	}
}

// stableBound is the best final score own can still reach given the
// opponent's stable discs.
func (g *geometry) stableBound(own, opp uint64) int {
	return g.squares - 2*bits.OnesCount64(g.stable(opp, own|opp))
}

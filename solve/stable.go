package solve

import "math/bits"

// stable returns a subset of own's discs that can never be flipped: a disc
// is stable when, on each of the four lines through it, the line is full or
// one of its two neighbours on that line is off the board or a stable disc
// of the same colour. Grown from nothing to a fixed point, so the answer is
// sound; it misses some stable discs (those protected by opponent discs
// that are themselves stable), which only makes the bound weaker.
func (g *geometry) stable(own, occ uint64) uint64 {
	// full[d] holds the occupied squares from which every square up to the
	// edge in direction d is occupied.
	var full [8]uint64
	for d := range full {
		f := occ & g.edge[d]
		back := (d + 4) % 8
		for i := 0; i < 7; i++ {
			f |= occ & step(f, back)
		}
		full[d] = f
	}
	var line [4]uint64 // squares whose whole line on axis d is full
	for d := range line {
		line[d] = full[d] & full[d+4]
	}
	var st uint64
	for {
		next := own
		for d := 0; d < 4; d++ {
			// A stable neighbour in direction d shows up at sq after a
			// step in the opposite direction.
			anchored := g.edge[d] | g.edge[d+4] | step(st, d+4) | step(st, d)
			next &= line[d] | anchored
		}
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

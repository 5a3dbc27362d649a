package board

import "math/bits"

// Symmetry i (0..7) is built from three reflections, applied in this order:
// transpose if i&4 (column and row swap), mirror the columns if i&2, flip
// the rows if i&1. The eight combinations are the dihedral group of the
// square, and Transform(p, 0) is the identity.

// flipVertical reverses the rows of the 8x8 frame.
func flipVertical(x uint64) uint64 { return bits.ReverseBytes64(x) }

// MirrorHorizontal reverses the columns of the 8x8 frame (the bits of each
// byte), by swapping bits, pairs and nibbles.
func MirrorHorizontal(x uint64) uint64 {
	const k1, k2, k4 = 0x5555555555555555, 0x3333333333333333, 0x0f0f0f0f0f0f0f0f
	x = (x>>1)&k1 | (x&k1)<<1
	x = (x>>2)&k2 | (x&k2)<<2
	x = (x>>4)&k4 | (x&k4)<<4
	return x
}

// FlipDiagonal swaps rows and columns of the 8x8 frame: square (c, r) goes
// to (r, c). The top-left n x n corner maps onto itself, so no realignment
// is needed for small boards.
func FlipDiagonal(x uint64) uint64 {
	const k1, k2, k4 = 0x5500550055005500, 0x3333000033330000, 0x0f0f0f0f00000000
	t := k4 & (x ^ x<<28)
	x ^= t ^ t>>28
	t = k2 & (x ^ x<<14)
	x ^= t ^ t>>14
	t = k1 & (x ^ x<<7)
	x ^= t ^ t>>7
	return x
}

// transform applies symmetry i to one mask. An 8x8 reflection sends the
// top-left n x n corner to the opposite edge of the frame; shifting back by
// 8-n rows or columns returns it to the corner. The column shift crosses
// byte boundaries, but only the frame's empty low columns move across them.
func (b *Board) transform(x uint64, i int) uint64 {
	if i&4 != 0 {
		x = FlipDiagonal(x)
	}
	if i&2 != 0 {
		x = MirrorHorizontal(x) >> b.shift
	}
	if i&1 != 0 {
		x = flipVertical(x) >> (8 * b.shift)
	}
	return x
}

// Transform returns the image of p under symmetry i (0..7); the side to move
// is kept. Other values of i are taken modulo 8.
func (b *Board) Transform(p Position, i int) Position {
	i &= 7
	return Position{Occ: b.transform(p.Occ, i), White: b.transform(p.White, i), Side: p.Side}
}

// TransformSquare returns where square sq goes under symmetry i, consistent
// with Transform. Squares off the board are returned unchanged.
func (b *Board) TransformSquare(sq, i int) int {
	if !b.onBoard(sq) {
		return sq
	}
	c, r := sq%8, sq/8
	last := b.size - 1
	if i&4 != 0 {
		c, r = r, c
	}
	if i&2 != 0 {
		c = last - c
	}
	if i&1 != 0 {
		r = last - r
	}
	return r*8 + c
}

// images returns the eight images of one mask, indexed by symmetry. The
// reflections are shared: the row flip is a byte swap, so every image costs
// at most one extra instruction once the transpose and the mirrors exist.
func (b *Board) images(x uint64) [8]uint64 {
	s, v := b.shift, 8*b.shift
	t := FlipDiagonal(x)
	m, mt := MirrorHorizontal(x), MirrorHorizontal(t)
	return [8]uint64{
		x,
		flipVertical(x) >> v,
		m >> s,
		flipVertical(m) >> (v + s),
		t,
		flipVertical(t) >> v,
		mt >> s,
		flipVertical(mt) >> (v + s),
	}
}

// Canonical returns the image of p with the smallest (Occ, White), compared
// as unsigned; the side to move is kept. Occupancy alone almost always
// decides, so the white images are computed only when it does not.
func (b *Board) Canonical(p Position) Position {
	occ := b.images(p.Occ)
	return b.canonical(p, &occ, &noImages)
}

// noImages is the images of an empty mask.
var noImages [8]uint64

// canonical is Canonical given the images of p's occupancy, each the or
// of occ's and with's (a parent's and the square of its move).
func (b *Board) canonical(p Position, occ, with *[8]uint64) Position {
	best, ties := minImage(occ, with)
	if ties&(ties-1) == 0 {
		i := bits.TrailingZeros(ties)
		return Position{Occ: best, White: b.transform(p.White, i), Side: p.Side}
	}
	wh := b.images(p.White)
	w := ^uint64(0)
	for ; ties != 0; ties &= ties - 1 {
		w = min(w, wh[bits.TrailingZeros(ties)])
	}
	return Position{Occ: best, White: w, Side: p.Side}
}

// minImageScalar is minImage without vectors, the reference the vector
// version is tested against.
func minImageScalar(a, b *[8]uint64) (best uint64, ties uint) {
	var occ [8]uint64
	for i := range occ {
		occ[i] = a[i] | b[i]
	}
	best = occ[0]
	for _, o := range occ[1:] {
		best = min(best, o)
	}
	for i, o := range occ {
		if o == best {
			ties |= 1 << uint(i)
		}
	}
	return best, ties
}

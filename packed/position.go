package packed

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/reversi-cloud/reversi/board"
)

// Positions in a block share the side to move and the number of discs
// (writers start a new block when either changes, which a ply's sorted
// positions do at most once). The first is stored in full: side (1 bit),
// Occ (64 bits), then White as popcount(Occ) bits, one per occupied
// square (pext of White over Occ). Each later one starts with a prefix
// that says how it follows the previous one:
//
//	1   the same occupancy: the white bits, popcount(Occ) of them, which
//	    must be greater than the previous position's
//	01  the previous position again (edges only; corrupt in a key block)
//	00  a new occupancy: gamma(Occ - previous Occ - 1, kOcc), then the
//	    white bits
//
// (bits in the order they are read). Every step moves forward, so a
// decoder cannot produce out-of-order positions; it checks that the
// white bits grow, that the occupancy neither wraps nor changes its
// disc count, and that repeats come only in edge blocks. The order kOcc
// (6 bits, before the first position) is chosen per block to minimise its
// size.
//
// The white bits are stored whole, not as deltas, and the occupancy as a
// plain difference rather than the difference of combinatorial ranks
// (format version 1): a position then costs a few more bits (at ply 10,
// 2.20 bytes a key against 1.62 and 4.16 an edge against 3.71), and a
// decoder reads most positions with one mask and one comparison at a
// fixed bit length, with no variable-length code and no unranking, which
// makes it about three times as fast (doc.go).

// Prefixes of a position after the first, as the low bits of a peek.
const (
	prefixSameOcc = 1 // 1 bit
	prefixRepeat  = 2 // 2 bits, 0 then 1
	prefixNewOcc  = 0 // 2 bits
)

// posEncoder codes the positions of one block as they are added: the
// occupancy deltas, and the histogram that chooses their gamma order, are
// taken then, in one pass over the input, and the block is written from
// them when it is full.
type posEncoder struct {
	n      int         // positions added
	side   board.Color // every position's side to move
	occ0   uint64      // the first position's Occ
	occ    uint64      // the last position's Occ
	white  uint64      // and white bits, pext(White, Occ)
	white0 uint64      // the first position's white bits
	// From the second position on, dOcc is the occupancy's delta (0 for
	// the same occupancy) and white the position's white bits: position
	// i's at i-1, for the block's first n-1 entries. The slices keep
	// their whole length from block to block, so that adding a position
	// stores two words, not two appends' lengths too.
	dOcc, whites []uint64
	hOcc         lenHist
	kOcc         uint
}

// reset empties the encoder for the next block, keeping its buffers.
func (e *posEncoder) reset() {
	e.n = 0
	e.hOcc = lenHist{}
}

// addDiscs appends p, which sorts after the previous position and
// shares its block (sameBlock), with its white discs where addBits takes
// white bits: extractWhites turns them into bits for the whole block at
// once, where a PEXT call a position cost a fifth of writing the keys.
// The repeat test compares discs then, as good for one occupancy.
func (e *posEncoder) addDiscs(p board.Position) {
	e.addBits(p.Side, p.Occ, p.White)
}

// extractWhites turns the white discs that addDiscs took into white bits,
// before the block is written.
func (e *posEncoder) extractWhites() {
	if e.n == 0 {
		return
	}
	e.white0 = pext(e.white0, e.occ0)
	if e.n == 1 {
		return
	}
	if useBMI2 {
		extractDeltasBMI2(e.occ0, &e.dOcc[0], &e.whites[0], e.n-1)
		return
	}
	occ := e.occ0
	for i, d := range e.dOcc[:e.n-1] {
		occ += d
		e.whites[i] = pextBits(e.whites[i], occ)
	}
}

// addBits is add for the position of side to move side, occupancy occ
// and white bits white (WhiteBits).
func (e *posEncoder) addBits(side board.Color, occ, white uint64) bool {
	if e.n == 0 {
		e.n, e.side, e.occ0, e.occ, e.white, e.white0 = 1, side, occ, occ, white, white
		return false
	}
	d := occ - e.occ
	if d != 0 {
		e.hOcc.add(d - 1)
	}
	if i := e.n - 1; i < len(e.dOcc) && i < len(e.whites) {
		e.dOcc[i], e.whites[i] = d, white
	} else {
		e.dOcc, e.whites = setPast(e.dOcc, i, d), setPast(e.whites, i, white)
	}
	repeat := d == 0 && white == e.white
	e.occ, e.white = occ, white
	e.n++
	return repeat
}

// repeats reports whether position i of the block is position i-1 again.
func (e *posEncoder) repeats(i int) bool {
	if i == 0 || e.dOcc[i-1] != 0 {
		return false
	}
	prev := e.white0
	if i > 1 {
		prev = e.whites[i-2]
	}
	return e.whites[i-1] == prev
}

// params chooses and writes the block's gamma order.
func (e *posEncoder) params(w *bitWriter) {
	e.kOcc = e.hOcc.best()
	w.write(uint64(e.kOcc), 6)
}

// put writes position i of the block.
func (e *posEncoder) put(w *bitWriter, i int) {
	k := uint(bits.OnesCount64(e.occ0))
	if i == 0 {
		w.write(uint64(e.side), 1)
		w.write64(e.occ0, 64)
		w.write64(e.white0, k)
		return
	}
	switch d := e.dOcc[i-1]; {
	case e.repeats(i):
		w.write(prefixRepeat, 2)
		return
	case d == 0:
		w.write(prefixSameOcc, 1)
	default:
		w.write(prefixNewOcc, 2)
		w.gamma(d-1, e.kOcc)
	}
	w.write64(e.whites[i-1], k)
}

// posDecoder reads the positions of one block.
type posDecoder struct {
	kOcc  uint
	k     uint   // discs of every position in the block
	white uint64 // pext(White, Occ)
	pos   board.Position
}

func (d *posDecoder) params(r *bitReader) {
	d.kOcc = uint(r.read(6))
}

// first reads the block's first position.
func (d *posDecoder) first(r *bitReader) {
	side := board.Color(r.read(1))
	occ := r.read64(64)
	d.k = uint(bits.OnesCount64(occ))
	d.white = r.read64(d.k)
	d.pos = board.Position{Side: side, Occ: occ, White: newDepositor(occ).deposit(d.white)}
}

// The decoding loops, decodeKeys and decodeEdges, keep the position in
// the payload and the decoders' state in locals, which the compiler holds
// in registers where a reader's fields would be stored and loaded again
// around every code; everything else of the package goes through the bit
// reader's methods. Each loop reads the common entry, white bits under
// the same occupancy, at a fixed length, so that the next entry's load
// does not wait on this one's bits, with a mask and a comparison; it
// reads a new occupancy whose code fits in the same peek too, and hands
// the rest (long codes, more than 56 discs, errors) to step. A loop
// leaves every entry's white bits in White and one pass after it
// deposits them all (depositPositions): a call per entry would cost the
// loop its registers. Keys and edges have a loop each because one loop
// for both was a quarter slower on keys, whose registers the edge state
// took.

// start checks a block's count and reads its first position, returning
// the bit position after it.
func (d *posDecoder) start(b *bitReader, count int) (uint, error) {
	// Every entry after the first takes at least two bits, which bounds
	// the buffers a corrupt count could make us allocate.
	if count > b.end/2+1 {
		return 0, fmt.Errorf("%w: %d entries in %d bytes", ErrCorrupt, count, b.end/8)
	}
	d.first(b)
	return uint(b.pos), nil
}

// sameOccBit is what a loop tests a peek against for the common entry:
// its prefix bit when the entry, the bit and k white bits, fits in one
// peek, as it does up to 56 discs, and otherwise 0, which no entry
// matches, so that step reads them all.
func sameOccBit(k uint) uint64 {
	if 1+k <= 57 {
		return prefixSameOcc
	}
	return 0
}

// follows reports whether occ, a previous occupancy prev plus a delta
// plus one, is a valid next occupancy of k discs: above prev (a sum that
// wraps is not) and of as many discs.
func follows(occ, prev uint64, k uint) bool {
	return occ > prev && uint(bits.OnesCount64(occ)) == k
}

// step reads any position entry at bit pos, in a key block or an edge
// block (edges), by the bit reader: the loops hand it those they do not
// read themselves. occ and white are the previous position's; it returns
// the bit position after the entry, the new occupancy and white bits,
// whether the entry repeats the previous one, and a non-empty bad for an
// entry out of range.
func (d *posDecoder) step(b *bitReader, pos uint, occ, white uint64, edges bool) (next uint, newOcc, newWhite uint64, repeat bool, bad string) {
	k := d.k
	x := peekAt(b.buf, pos)
	switch {
	case x&1 == prefixSameOcc:
		w, c := b.readAt(pos+1, k)
		if w <= white {
			return pos, occ, white, false, "white discs out of order"
		}
		return c.pos, occ, w, false, ""
	case x&3 == prefixRepeat:
		if !edges {
			return pos, occ, white, false, "a key repeats"
		}
		return pos + 2, occ, white, true, ""
	}
	c := cursorAt(b.buf, pos+2)
	dOcc, c, ok := c.gamma(b, d.kOcc)
	// dOcc+1 wraps to 0 for the largest delta, which the first test
	// refuses with the rest that wrap.
	newOcc = occ + dOcc + 1
	if !ok || !follows(newOcc, occ, k) {
		return pos, occ, white, false, "occupancy out of range"
	}
	newWhite, c = b.readAt(c.pos, k)
	return c.pos, newOcc, newWhite, false, ""
}

// end checks what stopped a loop at bit pos: an entry out of range
// (bad), or a payload that the entries do not fill exactly.
func (d *posDecoder) end(b *bitReader, pos uint, bad string) error {
	b.pos = int(pos)
	if bad == "" && (b.overrun() || !b.exhausted()) {
		bad = "block entries do not fill its payload exactly"
	}
	if bad != "" {
		return fmt.Errorf("%w: %s", ErrCorrupt, bad)
	}
	return nil
}

// decodeKeys appends the count positions of a key block, after its
// parameters, to dst.
func (d *posDecoder) decodeKeys(b *bitReader, count int, dst []board.Position) ([]board.Position, error) {
	pos, err := d.start(b, count)
	if err != nil {
		return dst, err
	}
	base := len(dst)
	dst = slices.Grow(dst, count)[:base+count]
	keys := dst[base:]
	keys[0] = d.pos
	p, white := d.pos, d.white
	p.White = white
	k, kOcc, same := d.k, d.kOcc, sameOccBit(d.k)
	maxWhite := uint64(1)<<k - 1 // a shift by 64 is 0, so k = 64 gives all ones
	bad, buf := "", b.buf
	for i := 1; i < len(keys); i++ {
		x := peekAt(buf, pos)
		if x&same != 0 {
			w := x >> 1 & maxWhite
			if w <= white {
				bad = "white discs out of order"
				break
			}
			white = w
			pos += 1 + k
		} else {
			// A new occupancy whose code fits in the peek, or step.
			if dOcc, used := gammaBits(x>>2, kOcc); x&3 == prefixNewOcc && 2+used+k <= 57 {
				occ := p.Occ + dOcc + 1
				if !follows(occ, p.Occ, k) {
					bad = "occupancy out of range"
					break
				}
				p.Occ, white, pos = occ, x>>((2+used)&63)&maxWhite, pos+2+used+k
			} else if pos, p.Occ, white, _, bad = d.step(b, pos, p.Occ, white, false); bad != "" {
				break
			}
		}
		p.White = white
		keys[i] = p
	}
	if err := d.end(b, pos, bad); err != nil {
		return dst[:base], err
	}
	// The first entry, from first, has its white discs already.
	depositPositions(keys[1:])
	return dst, nil
}

// decodeEdges reads the count edges of an edge block, after its
// parameters, into edges[:0]: each a position and then its ref.
func (d *posDecoder) decodeEdges(b *bitReader, count int, edges []Edge, refs *refDecoder) ([]Edge, error) {
	pos, err := d.start(b, count)
	if err != nil {
		return edges[:0], err
	}
	edges = slices.Grow(edges[:0], count)[:count]
	ref, c := refs.first(b.buf, cursorAt(b.buf, pos), refs.prev)
	pos = c.pos
	edges[0] = Edge{Pos: d.pos, Ref: ref}
	wIndex, kBlob, kIndex := refs.wIndex, refs.kBlob, refs.kIndex
	mIndex := uint64(1)<<wIndex - 1
	// A later ref in the same blob starts with gamma(0, kBlob): a one,
	// then kBlob zeros.
	sameBlob, mSameBlob := kBlob+1, uint64(1)<<(kBlob+1&63)-1
	p, white := d.pos, d.white
	p.White = white
	k, kOcc, same := d.k, d.kOcc, sameOccBit(d.k)
	maxWhite := uint64(1)<<k - 1
	bad, buf := "", b.buf
loop:
	for i := 1; i < len(edges); i++ {
		repeat := false
		x := peekAt(buf, pos)
		switch {
		case x&same != 0:
			w := x >> 1 & maxWhite
			if w <= white {
				bad = "white discs out of order"
				break loop
			}
			white = w
			pos += 1 + k
		case x&3 == prefixRepeat:
			repeat = true
			pos += 2
		default:
			// A new occupancy whose code fits in the peek, or step.
			if dOcc, used := gammaBits(x>>2, kOcc); x&3 == prefixNewOcc && 2+used+k <= 57 {
				occ := p.Occ + dOcc + 1
				if !follows(occ, p.Occ, k) {
					bad = "occupancy out of range"
					break loop
				}
				p.Occ, white, pos = occ, x>>((2+used)&63)&maxWhite, pos+2+used+k
			} else if pos, p.Occ, white, repeat, bad = d.step(b, pos, p.Occ, white, true); bad != "" {
				break loop
			}
		}
		p.White = white
		x = peekAt(buf, pos)
		if !repeat {
			// A first ref in the same blob as the last, which an
			// expansion run's all are, without the call of first.
			if x&1 != 0 && 1+wIndex <= 57 {
				ref.Index = uint32(x >> 1 & mIndex)
				pos += 1 + wIndex
			} else {
				ref, c = refs.first(buf, cursorAt(buf, pos), ref)
				pos = c.pos
			}
		} else if di, used := gammaBits(x>>(sameBlob&63), kIndex); x&mSameBlob == 1 && sameBlob+used <= 57 && di <= uint64(^ref.Index) {
			// A later ref in the same blob, which an expansion run's
			// all are, without the call of cont.
			ref.Index += uint32(di)
			pos += sameBlob + used
		} else {
			if ref, c, err = refs.cont(b, cursorAt(buf, pos), ref); err != nil {
				return edges[:0], err
			}
			pos = c.pos
		}
		edges[i] = Edge{Pos: p, Ref: ref}
	}
	if err := d.end(b, pos, bad); err != nil {
		return edges[:0], err
	}
	depositEdges(edges[1:])
	return edges, nil
}

// sameBlock reports whether a position of side t and occupancy q may
// follow one of side s and occupancy p in one block.
func sameBlock(s board.Color, p uint64, t board.Color, q uint64) bool {
	return s == t && bits.OnesCount64(p) == bits.OnesCount64(q)
}

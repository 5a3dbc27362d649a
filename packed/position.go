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
// square (pext of White over Occ). Each later one stores
//
//	gamma(rank(Occ) - rank(previous Occ), kOcc)
//	if that is 0: gamma(white bits - previous white bits - strict, kWhite)
//	else:         the white bits, popcount(Occ) of them
//
// where rank is the colexicographic rank among masks of that popcount,
// and strict is 1 for keys (distinct) and 0 for edges (where 0 means the
// same position again). Both deltas are nonnegative because the input is
// sorted, so a decoder cannot produce out-of-order positions; it checks
// only that sums stay in range. The orders kOcc and kWhite (6 bits each,
// before the first position) are chosen per block to minimise its size.

// posEncoder codes the positions of one block as they are added: the
// deltas and the histograms that choose the gamma orders are taken then,
// in one pass over the input, and the block is written from them when it
// is full.
type posEncoder struct {
	strict uint64
	n      int            // positions added
	first  board.Position // the block's first position
	occ    uint64         // the last position's Occ
	rank   uint64         // and its rank
	white  uint64         // and white bits, pext(White, Occ)
	white0 uint64         // the first position's white bits
	// From the second position on, dr is the occupancy's rank delta and v
	// the white delta less strict where dr is 0, the white bits otherwise.
	dr, v        []uint64
	hOcc, hWhite lenHist
	kOcc, kWhite uint
}

// reset empties the encoder for the next block, keeping its buffers.
func (e *posEncoder) reset() {
	e.n, e.dr, e.v = 0, e.dr[:0], e.v[:0]
	e.hOcc, e.hWhite = lenHist{}, lenHist{}
}

// add appends p, which sorts after the previous position (keys) or not
// before it (edges) and shares its block (sameBlock), and reports whether
// p is the previous position again.
func (e *posEncoder) add(p board.Position) bool {
	w := pext(p.White, p.Occ)
	if e.n == 0 {
		e.n, e.first, e.occ, e.rank, e.white, e.white0 = 1, p, p.Occ, rank(p.Occ), w, w
		return false
	}
	var d, v uint64
	if p.Occ == e.occ {
		v = w - e.white - e.strict
		e.hWhite.add(v)
	} else {
		r := rank(p.Occ)
		d, v = r-e.rank, w
		e.occ, e.rank = p.Occ, r
	}
	e.hOcc.add(d)
	e.dr, e.v = append(e.dr, d), append(e.v, v)
	e.white = w
	e.n++
	return e.repeat(d, v)
}

// repeats reports whether position i of the block is position i-1 again.
func (e *posEncoder) repeats(i int) bool { return i > 0 && e.repeat(e.dr[i-1], e.v[i-1]) }

// repeat reports whether a position coded as rank delta d and value v
// (white delta less strict, where d is 0) is the previous one again: the
// same occupancy and a white delta of zero. Only edges repeat; a key
// writer refuses equal positions.
func (e *posEncoder) repeat(d, v uint64) bool { return d == 0 && v+e.strict == 0 }

// params chooses and writes the block's gamma orders.
func (e *posEncoder) params(w *bitWriter) {
	e.kOcc, e.kWhite = e.hOcc.best(), e.hWhite.best()
	w.write(uint64(e.kOcc), 6)
	w.write(uint64(e.kWhite), 6)
}

// put writes position i of the block.
func (e *posEncoder) put(w *bitWriter, i int) {
	if i == 0 {
		w.write(uint64(e.first.Side), 1)
		w.write64(e.first.Occ, 64)
		w.write64(e.white0, uint(bits.OnesCount64(e.first.Occ)))
		return
	}
	d, v := e.dr[i-1], e.v[i-1]
	w.gamma(d, e.kOcc)
	if d == 0 {
		w.gamma(v, e.kWhite)
		return
	}
	w.write64(v, uint(bits.OnesCount64(e.first.Occ)))
}

// posDecoder reads the positions of one block.
type posDecoder struct {
	strict uint64
	kOcc   uint
	kWhite uint
	k      uint   // discs of every position in the block
	limit  uint64 // binom[k][64]: ranks are below it
	rank   uint64
	white  uint64 // pext(White, Occ)
	pos    board.Position
	dep    depositor // of pos.Occ
}

func (d *posDecoder) params(r *bitReader) {
	d.kOcc, d.kWhite = uint(r.read(6)), uint(r.read(6))
}

// first reads the block's first position.
func (d *posDecoder) first(r *bitReader) {
	side := board.Color(r.read(1))
	occ := r.read64(64)
	d.k = uint(bits.OnesCount64(occ))
	d.limit = binom[d.k][64]
	d.rank = rank(occ)
	d.white = r.read64(d.k)
	d.dep = newDepositor(occ)
	d.pos = board.Position{Side: side, Occ: occ, White: d.dep.deposit(d.white)}
}

// decode reads the count entries of a block, after its parameters: with
// refs nil (a key block) its positions into keys[:0], otherwise (an edge
// block) its edges, each a position and the ref after it, into
// edges[:0]. It checks that every sum stays in range and that the
// entries fill the payload exactly.
//
// Everything else of the package goes through the bit reader's methods;
// this loop, where decoding spends its time, keeps the position in the
// payload and the decoders' state in locals, which the compiler holds in
// registers where a reader's fields would be stored and loaded again
// around every code.
func (d *posDecoder) decode(b *bitReader, count int, keys []board.Position, edges []Edge, refs *refDecoder) ([]board.Position, []Edge, error) {
	keys, edges = keys[:0], edges[:0]
	// Every entry after the first takes at least two bits, which bounds
	// the buffers a corrupt count could make us allocate.
	if count > b.end/2+1 {
		return keys, edges, fmt.Errorf("%w: %d entries in %d bytes", ErrCorrupt, count, b.end/8)
	}
	d.first(b)
	c := cursorAt(b.buf, uint(b.pos))
	var ref Ref
	var wIndex, kBlob, kIndex uint
	if refs == nil {
		keys = slices.Grow(keys, count)[:count]
		keys[0] = d.pos
	} else {
		edges = slices.Grow(edges, count)[:count]
		ref, c = refs.first(b.buf, c, refs.prev)
		edges[0] = Edge{Pos: d.pos, Ref: ref}
		wIndex, kBlob, kIndex = refs.wIndex, refs.kBlob, refs.kIndex
	}
	mIndex := uint64(1)<<wIndex - 1
	// A later ref in the same blob starts with gamma(0, kBlob): a one,
	// then kBlob zeros.
	sameBlob, mSameBlob := kBlob+1, uint64(1)<<(kBlob+1&63)-1
	p, rank, white, dep := d.pos, d.rank, d.white, d.dep
	// With PDEP, the loop leaves every entry's white bits in White and
	// one pass after it deposits them all: a call per entry would cost
	// the loop its registers.
	bmi := useBMI2
	if bmi {
		p.White = white
	}
	kOcc, kWhite, strict := d.kOcc, d.kWhite, d.strict
	maxWhite := uint64(1)<<d.k - 1 // a shift by 64 is 0, so k = 64 gives all ones
	// bad names what was wrong with the entry that ended the loop early.
	bad := ""
	// Each code is taken from the cursor if it fits in its valid bits
	// (gammaBits reports a length above them otherwise), or read by
	// the bit reader, which also takes codes longer than a peek: the
	// steps of cursor.gamma, spelled out as it does not inline.
	buf := b.buf
	for i := 1; i < count; i++ {
		c = cursorAt(buf, c.pos)
		dr, used := gammaBits(c.x, kOcc)
		ok := used <= c.avail
		if ok {
			c = c.skip(used)
		} else if dr, c, ok = b.gammaAt(c.pos, kOcc); !ok {
			bad = "bad occupancy delta"
			break
		}
		same := false
		if dr == 0 {
			dw, used := gammaBits(c.x, kWhite)
			if ok = used <= c.avail; ok {
				c = c.skip(used)
			} else {
				dw, c, ok = b.gammaAt(c.pos, kWhite)
			}
			// The sum must not pass the largest value of k bits.
			room := maxWhite - white
			if !ok || room < strict || dw > room-strict {
				bad = "white discs out of range"
				break
			}
			w := white + dw + strict
			same = w == white
			white = w
		} else {
			nr := rank + dr
			if nr < rank || nr >= d.limit {
				bad = "occupancy out of range"
				break
			}
			rank = nr
			p.Occ = nextOcc(p.Occ, int(d.k), dr)
			if d.k <= c.avail {
				white = c.x & maxWhite
				c = c.skip(d.k)
			} else {
				white, c = b.readAt(c.pos, d.k)
			}
			if !bmi {
				dep = newDepositor(p.Occ)
			}
		}
		switch {
		case same:
		case bmi:
			p.White = white
		default:
			// dep.deposit(white), spelt out: the method is too big to
			// inline, and a call here costs the loop its registers.
			p.White = deposit4(dep.mask, dep.below, white) | deposit4(dep.mask>>32, dep.below>>32, white)<<32
		}
		if refs == nil {
			keys[i] = p
			continue
		}
		if !same {
			// A first ref in the same blob as the last, which an
			// expansion run's all are, without the call of first.
			if c.x&1 != 0 && 1+wIndex <= c.avail {
				ref.Index = uint32(c.x >> 1 & mIndex)
				c = c.skip(1 + wIndex)
			} else {
				ref, c = refs.first(buf, c, ref)
			}
		} else if di, used := gammaBits(c.x>>(sameBlob&63), kIndex); c.x&mSameBlob == 1 && sameBlob+used <= c.avail && di <= uint64(^ref.Index) {
			// A later ref in the same blob, which an expansion run's
			// all are, without the call of cont.
			ref.Index += uint32(di)
			c = c.skip(sameBlob + used)
		} else {
			var err error
			if ref, c, err = refs.cont(b, c, ref); err != nil {
				return keys[:0], edges[:0], err
			}
		}
		edges[i] = Edge{Pos: p, Ref: ref}
	}
	b.pos = int(c.pos)
	if bad == "" && (b.overrun() || !b.exhausted()) {
		bad = "block entries do not fill its payload exactly"
	}
	if bad != "" {
		return keys[:0], edges[:0], fmt.Errorf("%w: %s", ErrCorrupt, bad)
	}
	if bmi {
		// The first entry, from first, has its white discs already.
		if refs == nil {
			depositPositions(keys[1:])
		} else {
			depositEdges(edges[1:])
		}
	}
	return keys, edges, nil
}

// sameBlock reports whether q may follow p in one block.
func sameBlock(p, q board.Position) bool {
	return p.Side == q.Side && bits.OnesCount64(p.Occ) == bits.OnesCount64(q.Occ)
}

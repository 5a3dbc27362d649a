package packed

import (
	"fmt"
	"math/bits"

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

// posEncoder plans and writes the positions of one block.
type posEncoder struct {
	strict uint64
	rank   []uint64 // per position
	white  []uint64 // per position: pext(White, Occ)
	kOcc   uint
	kWhite uint
}

// plan computes the per-position values and the best gamma orders.
func (e *posEncoder) plan(ps func(i int) board.Position, n int) {
	e.rank, e.white = e.rank[:0], e.white[:0]
	var hOcc, hWhite lenHist
	var prev board.Position
	for i := range n {
		p := ps(i)
		r := uint64(0)
		switch {
		case i > 0 && p.Occ == prev.Occ:
			r = e.rank[i-1]
		default:
			r = rank(p.Occ)
		}
		w := pext(p.White, p.Occ)
		if i > 0 {
			d := r - e.rank[i-1]
			hOcc.add(d)
			if d == 0 {
				hWhite.add(w - e.white[i-1] - e.strict)
			}
		}
		e.rank, e.white = append(e.rank, r), append(e.white, w)
		prev = p
	}
	e.kOcc, e.kWhite = hOcc.best(), hWhite.best()
}

// params writes the block's gamma orders.
func (e *posEncoder) params(w *bitWriter) {
	w.write(uint64(e.kOcc), 6)
	w.write(uint64(e.kWhite), 6)
}

// put writes position i of the plan, p.
func (e *posEncoder) put(w *bitWriter, i int, p board.Position) {
	k := uint(bits.OnesCount64(p.Occ))
	if i == 0 {
		w.write(uint64(p.Side), 1)
		w.write64(p.Occ, 64)
		w.write64(e.white[0], k)
		return
	}
	d := e.rank[i] - e.rank[i-1]
	w.gamma(d, e.kOcc)
	if d == 0 {
		w.gamma(e.white[i]-e.white[i-1]-e.strict, e.kWhite)
		return
	}
	w.write64(e.white[i], k)
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

// next reads a later position; same reports that it equals the previous
// one (only when strict is 0).
func (d *posDecoder) next(r *bitReader) (same bool, err error) {
	// r.gamma, inlined by hand.
	x := r.peek()
	dr, used := gammaBits(x, d.kOcc)
	ok := r.skip(used)
	if !ok {
		dr, ok = r.gammaLong(d.kOcc)
	}
	if !ok {
		return false, fmt.Errorf("%w: bad occupancy delta", ErrCorrupt)
	}
	if dr == 0 {
		// The white delta mostly fits in the same peek: the bit reader
		// keeps its position in memory, so each peek waits for the
		// last code's store and load.
		dw, more := gammaBits(x>>(used&63), d.kWhite)
		if used+more <= 57 {
			r.pos += int(more)
		} else {
			dw, ok = r.gamma(d.kWhite)
		}
		w := d.white + dw + d.strict
		// The sum must neither wrap nor reach a bit beyond the k squares.
		if !ok || w < d.white || d.k < 64 && w>>d.k != 0 {
			return false, fmt.Errorf("%w: white discs out of range", ErrCorrupt)
		}
		if w == d.white {
			return true, nil
		}
		d.pos.White = d.dep.deposit(w)
		d.white = w
		return false, nil
	}
	nr := d.rank + dr
	if nr < d.rank || nr >= d.limit {
		return false, fmt.Errorf("%w: occupancy out of range", ErrCorrupt)
	}
	d.rank = nr
	d.pos.Occ = nextOcc(d.pos.Occ, int(d.k), dr)
	d.white = r.read64(d.k)
	d.dep = newDepositor(d.pos.Occ)
	d.pos.White = d.dep.deposit(d.white)
	return false, nil
}

// sameBlock reports whether q may follow p in one block.
func sameBlock(p, q board.Position) bool {
	return p.Side == q.Side && bits.OnesCount64(p.Occ) == bits.OnesCount64(q.Occ)
}

package expand

import (
	"math/bits"
	"slices"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

// The sort's first pass, made as the edges are generated. A large task's
// sort began with a pass over all its edges: a histogram of a wide digit
// of their occupancies, then every edge moved into one of 256 buckets of
// about equal size (scatterWideAt), and after the sort another pass
// moved the few edges with white to move after the others (splitSides).
// Here generate puts each edge straight into its bucket instead, and
// the buckets of the two sides apart, from a plan drawn up beforehand
// from the children of a sample of the parents: the edges are then
// copied once, bucket after bucket, and each bucket sorted on its own.
//
// Invariants:
//   - the bucket of an edge is its side, then its occupancy's bucket
//     (firstPass.bucket), which never decreases as the occupancy grows:
//     every edge of a bucket sorts before every edge of the next, so
//     sorting each bucket sorts the whole;
//   - the plan only balances the buckets: an occupancy outside the
//     sample's range goes to the first or the last bucket, which its own
//     sort then splits as finely as it needs.

// planSample is how many parents' children the first pass's plan is
// drawn from: some ten thousand children, about forty a bucket.
const planSample = 1024

// firstPass maps an occupancy to its bucket: its wideBits bits from the
// highest in which the sample's occupancies differ, counted from lo,
// mapped as scatterWideAt maps a range's digit.
type firstPass struct {
	lo       uint64
	shift    uint
	bucketOf [1 << wideBits]uint8
}

// bucket returns the bucket of occ, 0 to 255.
func (f *firstPass) bucket(occ uint64) int {
	if occ < f.lo {
		return 0
	}
	d := (occ - f.lo) >> f.shift
	if d >= 1<<wideBits {
		return 255
	}
	return int(f.bucketOf[d])
}

// plan draws f up from the children of planSample positions spread
// evenly over positions, kids being scratch space.
func (f *firstPass) plan(b *board.Board, positions []board.Position, kids []board.Position) {
	stride := max(1, len(positions)/planSample)
	var occs []uint64
	for i := 0; i < len(positions); i += stride {
		kids, _, _ = b.ChildrenTerminal(positions[i], kids[:0])
		for _, k := range kids {
			occs = append(occs, k.Occ)
		}
	}
	span := emptySpan
	least := ^uint64(0)
	for _, o := range occs {
		span.and &= o
		span.or |= o
		least = min(least, o)
	}
	f.shift = uint(max(bits.Len64(span.differ())-wideBits, 0))
	f.lo = least &^ (1<<f.shift - 1)
	var hist [1 << wideBits]uint32
	for _, o := range occs {
		hist[(o-f.lo)>>f.shift]++
	}
	mapWide(&hist, len(occs), &f.bucketOf, nil)
}

// chunkEdges is the size of the chunks in which generateBuckets gathers
// each bucket's edges: 8 KiB, two pages.
const chunkEdges = 512

// sideBuckets is the number of buckets: 256 for each side to move.
const sideBuckets = 2 * 256

// bucketed holds a task's edges as generateBuckets gathers them, in
// chunks of each bucket, and sorts them.
type bucketed struct {
	plan firstPass
	es   []edge // the chunks, and the sorted edges once sorted
	free int    // where the next chunk starts in es
	// next is where the next edge of each bucket goes: in its current
	// chunk, or at the start of one, a multiple of chunkEdges, when it
	// needs a new chunk. chunks holds where each of its chunks starts.
	next   [sideBuckets]int
	chunks [sideBuckets][]int
}

// reset readies k for a task of about edges edges in the memory of es,
// which it replaces if it is short: with an eighth more, as reserve
// grows a buffer, and room for every bucket's last chunk to be partly
// empty.
func (k *bucketed) reset(es []edge, edges int) {
	const partly = sideBuckets * chunkEdges
	if len(es) < edges+partly {
		es = make([]edge, edges+edges/8+partly)
	}
	k.es, k.free = es, 0
	k.next = [sideBuckets]int{}
	for i := range k.chunks {
		k.chunks[i] = k.chunks[i][:0]
	}
}

// add puts e into bucket b.
func (k *bucketed) add(b int, e edge) {
	i := k.next[b]
	if i%chunkEdges == 0 {
		i = k.chunk(b)
	}
	k.es[i] = e
	k.next[b] = i + 1
}

// chunk gives bucket b a new chunk and returns where it starts, growing
// es if it is full (the estimate of the edges was short).
func (k *bucketed) chunk(b int) int {
	if k.free+chunkEdges > len(k.es) {
		k.es = slices.Grow(k.es, len(k.es)/2+chunkEdges)
		k.es = k.es[:cap(k.es)]
	}
	start := k.free
	k.free += chunkEdges
	k.chunks[b] = append(k.chunks[b], start)
	return start
}

// filled returns where the edges of chunk start of bucket b end, the
// last of its chunks if last.
func (k *bucketed) filled(b, start int, last bool) int {
	if last {
		return k.next[b]
	}
	return start + chunkEdges
}

// len returns the number of edges in k.
func (k *bucketed) len() int {
	n := 0
	for b, starts := range k.chunks {
		if len(starts) > 0 {
			n += (len(starts)-1)*chunkEdges + k.next[b] - starts[len(starts)-1]
		}
	}
	return n
}

// sort returns k's edges sorted, in k.es, with tmp, at least k.len()
// long, as scratch space: each bucket's chunks are copied into tmp,
// bucket after bucket, and each bucket is then sorted back into es.
func (k *bucketed) sort(tmp []edge) []edge {
	var counts [sideBuckets]int
	n := 0
	for b, starts := range k.chunks {
		for i, start := range starts {
			c := copy(tmp[n:], k.es[start:k.filled(b, start, i == len(starts)-1)])
			n += c
			counts[b] += c
		}
	}
	es := k.es[:n]
	new(edgeSorter).sortBuckets(tmp[:n], es, counts[:], 0)
	return es
}

// generateBuckets is generate into k, in the memory of es, with the plan
// drawn up for positions, which have about moves moves (movesAbout).
func (l layout) generateBuckets(b *board.Board, positions []board.Position, moves int, k *bucketed, es []edge) Stats {
	k.plan.plan(b, positions, make([]board.Position, 0, 32))
	k.reset(es, moves)
	return l.fillBuckets(b, positions, k)
}

// fillBuckets generates the edges of positions into k's buckets, as
// its plan says.
func (l layout) fillBuckets(b *board.Board, positions []board.Position, k *bucketed) Stats {
	plan := &k.plan
	_, st := children(b, positions, []edge(nil), func(i int, kids []board.Position, terminal uint64, es []edge) []edge {
		packed.ExtractWhites(kids) // their white bits, in one call
		for j, c := range kids {
			k.add(int(c.Side)<<8|plan.bucket(c.Occ), l.edge(i, c, terminal>>j&1 == 1))
		}
		return es
	})
	return st
}

package solve

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// entry is what the table knows of one position: bounds on its exact score
// for the side to move, and the move that last proved best or cut off.
// Bounds are facts about the game, not about a search, so an entry stays
// true for as long as the board size is the same.
type entry struct {
	own, opp     uint64
	lower, upper int8
	move         int8 // -1: none
	empties      int8 // the search effort the entry stands for
	gen          uint8
}

// data packs the entry's fields other than the position into one word.
func (e entry) data() uint64 {
	return uint64(uint8(e.lower)) | uint64(uint8(e.upper))<<8 | uint64(uint8(e.move))<<16 |
		uint64(uint8(e.empties))<<24 | uint64(e.gen)<<32
}

// slot holds one entry so that the threads of a solve can share the table
// without locks: the position's words are stored XORed with the data word,
// so a slot read while another thread writes it (some words old, some new)
// reads as another position, a miss, unless the words happen to collide.
type slot struct{ own, opp, data atomic.Uint64 }

func (s *slot) load() entry {
	d := s.data.Load()
	return unpack(s.own.Load()^d, s.opp.Load()^d, d)
}

// unpack is the entry for the position with the data word d.
func unpack(own, opp, d uint64) entry {
	return entry{
		own: own, opp: opp,
		lower: int8(d), upper: int8(d >> 8), move: int8(d >> 16), empties: int8(d >> 24), gen: uint8(d >> 32),
	}
}

// match loads the slot's entry if it holds the position: the first word
// decides most misses before the others are read.
func (s *slot) match(own, opp uint64) (entry, bool) {
	d := s.data.Load()
	if s.own.Load()^d != own || s.opp.Load()^d != opp {
		return entry{}, false
	}
	e := unpack(own, opp, d)
	return e, e.empties != 0
}

func (s *slot) put(e entry) {
	d := e.data()
	s.data.Store(d)
	s.own.Store(e.own ^ d)
	s.opp.Store(e.opp ^ d)
}

// bucket pairs a slot kept for the most expensive position seen (until a
// later solve) with one that always takes the newest. It is padded to a
// cache line, and the table's buckets start at a line (Go allocates a
// power-of-two size from 64 bytes up at a multiple of 64), so a probe
// touches one line: unpadded, half the buckets would straddle two.
type bucket struct {
	slots [2]slot
	_     [bucketBytes - 2*24]byte
}

// table is a bounded transposition table, safe for concurrent probes and
// stores (see slot); newSearch and clear must not run during a search.
type table struct {
	buckets []bucket
	mask    uint64
	gen     uint8
	// free releases buckets that are not Go memory (allocBuckets); the
	// table's cleanup calls it once the table is unreachable, release at
	// once.
	free    func()
	cleanup runtime.Cleanup
}

// bucketBytes is the size of a bucket: the table budget is counted in it.
const bucketBytes = 64

// newTable returns a table of at most bytes bytes (at least one bucket),
// rounded down to a power of two buckets.
func newTable(bytes int) *table {
	n := bytes / bucketBytes
	if n < 1 {
		n = 1
	}
	n = 1 << uint(bits.Len(uint(n))-1)
	t := &table{mask: uint64(n - 1)}
	t.buckets, t.free = allocBuckets(n)
	if t.free != nil {
		t.cleanup = runtime.AddCleanup(t, func(free func()) { free() }, t.free)
	}
	return t
}

// release frees the table's memory now rather than when the collector
// finds it unreachable, which may be much later: the collector does not
// count memory it did not allocate. The table must not be used again.
func (t *table) release() {
	if t.free != nil {
		t.cleanup.Stop()
		t.free()
		t.free, t.buckets = nil, nil
	}
}

// clear forgets every position, for a change of board size.
func (t *table) clear() {
	for i := range t.buckets {
		for j := range t.buckets[i].slots {
			t.buckets[i].slots[j].put(entry{})
		}
	}
}

// newSearch lets the entries of earlier solves be replaced first.
func (t *table) newSearch() { t.gen++ }

// hash mixes a position into 64 bits, every bit of the position reaching
// every bit of the hash: the table takes its low bits, the busy marks of
// parallel.go its high ones. (A product alone carries a change only
// upwards: the table once ignored the bottom two rows, and positions
// differing in the colour of h8 alone had the same hash.)
func hash(own, opp uint64) uint64 {
	h := own*0x9e3779b97f4a7c15 ^ bits.RotateLeft64(opp*0xc2b2ae3d27d4eb4f, 32)
	// MurmurHash3's finaliser: each input bit changes each output bit
	// with probability about one half.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// prefetch starts loading the position's bucket into the cache, without
// waiting for it: the search prefetches the children it may probe while it
// orders them.
func (t *table) prefetch(own, opp uint64) {
	prefetch(&t.buckets[hash(own, opp)&t.mask])
}

// probe returns the entry for the position, if any.
func (t *table) probe(own, opp uint64) (entry, bool) {
	b := &t.buckets[hash(own, opp)&t.mask].slots
	for i := range b {
		if e, ok := b[i].match(own, opp); ok {
			return e, true
		}
	}
	return entry{}, false
}

// store records that the position's score lies in [lower, upper].
// Bounds already known are kept: a new search of a position may have used
// a narrower window and proved less than an old one.
func (t *table) store(own, opp uint64, empties, lower, upper, move int) {
	b := &t.buckets[hash(own, opp)&t.mask].slots
	e := entry{own: own, opp: opp, lower: int8(lower), upper: int8(upper), move: int8(move), empties: int8(empties), gen: t.gen}
	for i := range b {
		if old, ok := b[i].match(own, opp); ok {
			e.lower = max(e.lower, old.lower)
			e.upper = min(e.upper, old.upper)
			if move < 0 {
				e.move = old.move
			}
			b[i].put(e)
			return
		}
	}
	if first := b[0].load(); first.empties <= e.empties || first.gen != t.gen {
		b[1].put(first)
		b[0].put(e)
		return
	}
	b[1].put(e)
}

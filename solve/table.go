package solve

import "math/bits"

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

// bucket pairs a slot kept for the most expensive position seen (until a
// later solve) with one that always takes the newest.
type bucket [2]entry

// table is a bounded transposition table, not safe for concurrent use.
type table struct {
	buckets []bucket
	mask    uint64
	gen     uint8
}

// entryBytes is the size the table budget is counted in.
const entryBytes = 24

// newTable returns a table of at most bytes bytes (at least one bucket),
// rounded down to a power of two buckets.
func newTable(bytes int) *table {
	n := bytes / (2 * entryBytes)
	if n < 1 {
		n = 1
	}
	n = 1 << uint(bits.Len(uint(n))-1)
	t := &table{buckets: make([]bucket, n), mask: uint64(n - 1)}
	t.clear()
	return t
}

// clear forgets every position, for a change of board size.
func (t *table) clear() {
	for i := range t.buckets {
		t.buckets[i] = bucket{}
	}
}

// newSearch lets the entries of earlier solves be replaced first.
func (t *table) newSearch() { t.gen++ }

func (t *table) index(own, opp uint64) uint64 {
	h := own*0x9e3779b97f4a7c15 ^ (opp+0x632be59bd9b4e019)*0xc2b2ae3d27d4eb4f
	return (h ^ h>>29) & t.mask
}

// probe returns the entry for the position, if any.
func (t *table) probe(own, opp uint64) (entry, bool) {
	b := &t.buckets[t.index(own, opp)]
	for i := range b {
		if e := b[i]; e.own == own && e.opp == opp && e.empties != 0 {
			return e, true
		}
	}
	return entry{}, false
}

// store records that the position's score lies in [lower, upper].
// Bounds already known are kept: a new search of a position may have used
// a narrower window and proved less than an old one.
func (t *table) store(own, opp uint64, empties, lower, upper, move int) {
	b := &t.buckets[t.index(own, opp)]
	e := entry{own: own, opp: opp, lower: int8(lower), upper: int8(upper), move: int8(move), empties: int8(empties), gen: t.gen}
	for i := range b {
		if old := &b[i]; old.own == own && old.opp == opp && old.empties != 0 {
			e.lower = max(e.lower, old.lower)
			e.upper = min(e.upper, old.upper)
			if move < 0 {
				e.move = old.move
			}
			*old = e
			return
		}
	}
	if b[0].empties <= e.empties || b[0].gen != t.gen {
		b[1] = b[0]
		b[0] = e
		return
	}
	b[1] = e
}

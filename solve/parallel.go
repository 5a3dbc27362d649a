package solve

import (
	"math/bits"
	"sync/atomic"
)

// The threads of a parallel solve (Options.Threads) all search the root
// and share the table. High in the tree a thread marks the move it is
// searching as busy, and another thread coming to the same node searches
// its other moves first and the busy ones last, when the table usually
// knows them: the threads share out the moves after the first at each
// node (the first is searched by all, as it sets the window for the rest).

// splitMin: nodes with at least this many empties share out their moves.
const splitMin = 12

// busyBits sizes the busy marks: far more than the nodes being searched at
// once at splitMin or more empties, so that marks rarely collide.
const busyBits = 12

// parallel is what the threads of one solve share besides the table.
type parallel struct {
	// busy holds the hashes of positions a thread is searching, by their
	// top bits; 0 is free.
	busy  [1 << busyBits]atomic.Uint64
	stop  atomic.Bool  // the solve has its answer: helpers stop
	nodes atomic.Int64 // the threads' nodes as of their last polls
}

func newParallel() *parallel { return &parallel{} }

// reset prepares for a solve: marks left by helpers stopped in the middle
// of a search are dropped.
func (p *parallel) reset() {
	for i := range p.busy {
		p.busy[i].Store(0)
	}
	p.stop.Store(false)
	p.nodes.Store(0)
}

// next returns the index of the k-th move to search in ml: the moves in
// order, then the deferred ones (removed from deferred as they are
// returned); false when none is left.
func next(ml *moveList, k int, deferred *uint64) (int, bool) {
	if k < ml.n {
		return k, true
	}
	if *deferred == 0 {
		return 0, false
	}
	i := bits.TrailingZeros64(*deferred)
	*deferred &= *deferred - 1
	return i, true
}

// claim marks the child (own, opp) of a node with empties empties as busy
// before it is searched, in a parallel solve, if the node shares out that
// move. mark is -1 when another thread is searching it (defer it), 1 when
// marked (release it after the search), else 0.
func (s *Solver) claim(own, opp uint64, shared bool, empties int) (h uint64, mark int) {
	if s.par == nil || !shared || empties < splitMin {
		return 0, 0
	}
	return s.par.claim(hash(own, opp) | 1)
}

func (p *parallel) claim(h uint64) (uint64, int) {
	slot := &p.busy[h>>(64-busyBits)]
	switch cur := slot.Load(); {
	case cur == h:
		return h, -1
	case cur == 0 && slot.CompareAndSwap(0, h):
		return h, 1
	}
	return h, 0 // the slot holds another position: search unmarked
}

// release removes a mark claim made.
func (s *Solver) release(h uint64, mark int) {
	if mark > 0 {
		s.par.busy[h>>(64-busyBits)].Store(0)
	}
}

package packed

import "sync"

// scratch is the memory a key or edge writer grows to the size of a block
// and reuses from block to block: the position encoder's deltas and white
// bits, the block's refs (edges), its bits and its frame. A writer takes
// one when it is made and gives it back when it is closed, so that the
// next writer does not grow its own again: a merge writes a key blob for
// every final blob, an expansion task an edge run, and growing these for
// each was about a third of the bytes a run to 8x8 ply 12 allocated (a
// memory profile, docs/performance.md). A writer that is not closed (it
// failed) leaves its scratch to the collector.
type scratch struct {
	dOcc, whites []uint64
	refs         []Ref
	bits, frame  []byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// takeScratch takes a scratch from the pool and lends its buffers, empty,
// to a new writer's parts.
func takeScratch(pos *posEncoder, bits *bitWriter, blocks *blockWriter) *scratch {
	s := scratchPool.Get().(*scratch)
	pos.dOcc, pos.whites = s.dOcc[:0], s.whites[:0]
	bits.buf, blocks.frame = s.bits[:0], s.frame[:0]
	return s
}

// give takes back the buffers, as they have grown, from the parts of a
// closed writer, and puts s back in the pool.
func (s *scratch) give(pos *posEncoder, bits *bitWriter, blocks *blockWriter) {
	s.dOcc, s.whites, s.bits, s.frame = pos.dOcc, pos.whites, bits.buf, blocks.frame
	pos.dOcc, pos.whites, bits.buf, blocks.frame = nil, nil, nil, nil
	scratchPool.Put(s)
}

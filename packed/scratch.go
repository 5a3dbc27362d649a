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
	pos.dOcc, pos.whites = s.dOcc[:cap(s.dOcc)], s.whites[:cap(s.whites)]
	bits.buf, blocks.frame = s.bits[:0], s.frame[:0]
	return s
}

// setPast is s with v at index i, where i is past s's length: the
// scratch buffers that writers keep at their whole length (their count
// kept apart), so that storing an entry is one store, not an append's
// length too, take this way only the entries that outgrow them.
func setPast[T any](s []T, i int, v T) []T {
	s = append(s[:i], v)
	return s[:cap(s)]
}

// give takes back the buffers, as they have grown, from the parts of a
// closed writer, and puts s back in the pool.
func (s *scratch) give(pos *posEncoder, bits *bitWriter, blocks *blockWriter) {
	s.dOcc, s.whites, s.bits, s.frame = pos.dOcc, pos.whites, bits.buf, blocks.frame
	pos.dOcc, pos.whites, bits.buf, blocks.frame = nil, nil, nil, nil
	scratchPool.Put(s)
}

// readBuffers are the memory an edge reader decodes a block in: the
// block as read, and its edges. A merge opens a reader for each of its
// inputs, hundreds of them, and growing these afresh for each was about a
// quarter of the bytes a run to 8x8 ply 12 allocated (a memory profile,
// docs/performance.md). A reader takes them when it is made and gives
// them back when it is closed; one that is not closed leaves them to the
// collector.
type readBuffers struct {
	raw   []byte
	edges []Edge
}

var readPool = sync.Pool{New: func() any { return new(readBuffers) }}

func takeReadBuffers() *readBuffers { return readPool.Get().(*readBuffers) }

// give puts b back in the pool, holding raw and edges as they have grown.
func (b *readBuffers) give(raw []byte, edges []Edge) {
	b.raw, b.edges = raw[:0], edges[:0]
	readPool.Put(b)
}

package dedup

import (
	"errors"
	"math/bits"

	"github.com/reversi-cloud/reversi/packed"
)

// Errors reported for bad input. They are wrapped with context; test with
// errors.Is.
var (
	// ErrCorrupt reports splitters or merge inputs that do not decode.
	// Corrupt runs are packed.ErrCorrupt.
	ErrCorrupt = errors.New("dedup: corrupt data")
	// ErrOrder reports an input that should be sorted by packed.CompareEdges and
	// is not. Merging it would silently produce duplicates, so it is refused.
	ErrOrder = errors.New("dedup: run out of order")
)

// Ref names a parent position: the index of its ply's final blob and its
// index within that blob.
type Ref = packed.Ref

// Entry is one edge in a sorted run: a child position and one parent that
// leads to it. Runs are stored as packed edge blocks (packed.EdgeWriter)
// and sorted by packed.CompareEdges: position, then Ref.Blob, then
// Ref.Index.
type Entry = packed.Edge

// less is packed.CompareEdges(*a, *b) < 0, written out so that the sort
// and merge inner loops do not pay for a call and a three-way result.
func less(a, b *Entry) bool {
	if a.Pos.Side != b.Pos.Side {
		return a.Pos.Side < b.Pos.Side
	}
	if a.Pos.Occ != b.Pos.Occ {
		return a.Pos.Occ < b.Pos.Occ
	}
	if a.Pos.White != b.Pos.White {
		return a.Pos.White < b.Pos.White
	}
	if a.Ref.Blob != b.Ref.Blob {
		return a.Ref.Blob < b.Ref.Blob
	}
	return a.Ref.Index < b.Ref.Index
}

// lessBits is less without data-dependent branches: the four key words are
// subtracted as one 193-bit number and the final borrow is a < b. Merge
// compares entries of different runs, whose order is as unpredictable as
// a coin toss, so a mispredicted branch per field costs more than the
// subtraction chain.
func lessBits(a, b *Entry) uint64 {
	_, borrow := bits.Sub64(uint64(a.Ref.Blob)<<32|uint64(a.Ref.Index), uint64(b.Ref.Blob)<<32|uint64(b.Ref.Index), 0)
	_, borrow = bits.Sub64(a.Pos.White, b.Pos.White, borrow)
	_, borrow = bits.Sub64(a.Pos.Occ, b.Pos.Occ, borrow)
	_, borrow = bits.Sub64(uint64(a.Pos.Side), uint64(b.Pos.Side), borrow)
	return borrow
}

package dedup

import (
	"errors"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

// Errors reported for bad input. They are wrapped with context; test with
// errors.Is.
var (
	// ErrCorrupt reports splitters or merge inputs that do not decode.
	// Corrupt runs are packed.ErrCorrupt.
	ErrCorrupt = errors.New("dedup: corrupt data")
	// ErrOrder reports splitters that do not ascend. (A run that goes
	// backwards is the reader's packed.ErrCorrupt: see Merge.)
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

// less is packed.CompareEdges(*a, *b) < 0, written out so that the sort's
// inner loop does not pay for a call and a three-way result.
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

// key is an entry as the four words it sorts by, most significant
// first. The merge holds its runs' heads as keys: a match then loads four
// plain words, where an Entry needs a byte load and the ref's shift and
// or, and a key, four words and no more, is one SSA value the compiler
// can keep out of memory while the replay carries it up the tree.
type key struct{ side, occ, white, ref uint64 }

// keyOf is e's key.
func keyOf(e *Entry) key {
	return key{uint64(e.Pos.Side), e.Pos.Occ, e.Pos.White, uint64(e.Ref.Blob)<<32 | uint64(e.Ref.Index)}
}

// entry is keyOf's inverse.
func (k key) entry() Entry {
	return Entry{Pos: board.Position{Occ: k.occ, White: k.white, Side: board.Color(k.side)}, Ref: Ref{Blob: uint32(k.ref >> 32), Index: uint32(k.ref)}}
}

// A prefix is the first 128 bits of a key's order: the side, the
// occupancy and the white discs but the lowest square's. Two prefixes
// that differ order their keys as the keys do; equal ones leave the
// order to the whole keys (the same position from two runs, or two that
// differ in that square alone). The merge's matches compare prefixes:
// two words subtracted where a key is four, on the chain of matches
// each replay climbs one after the other.
type prefix struct{ hi, lo uint64 }

// prefixOf is k's prefix. The side is 0 or 1 here: an exhausted run's
// head has the prefix last (all ones), which ties with nothing but the
// last possible position and then loses on the whole key.
func prefixOf(k key) prefix {
	return prefix{k.side<<63 | k.occ>>1, k.occ<<63 | k.white>>1}
}

// lessPrefix is lessBits for prefixes, as a mask: all ones if a sorts
// before b, else 0. climbGeneric uses the mask as it is; a 0 or 1, which
// lessBits gives, took two negations more on its chain of matches (the
// compiler makes the borrow a mask and then 0 or 1, and the replay made
// it a mask again), two of the seven instructions each match waited on.
func lessPrefix(a, b prefix) uint64 {
	_, borrow := bits.Sub64(a.lo, b.lo, 0)
	_, borrow = bits.Sub64(a.hi, b.hi, borrow)
	mask, _ := bits.Sub64(0, 0, borrow)
	return mask
}

// lessBits is less without data-dependent branches: 1 if a sorts before
// b, else 0. The four words are subtracted as one 256-bit number and the
// final borrow is a < b. Merge compares entries of different runs, whose
// order is as unpredictable as a coin toss, so a mispredicted branch per
// field costs more than the subtraction chain.
func lessBits(a, b key) uint64 {
	_, borrow := bits.Sub64(a.ref, b.ref, 0)
	_, borrow = bits.Sub64(a.white, b.white, borrow)
	_, borrow = bits.Sub64(a.occ, b.occ, borrow)
	_, borrow = bits.Sub64(a.side, b.side, borrow)
	return borrow
}

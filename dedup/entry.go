package dedup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
)

// Errors reported for bad input. They are wrapped with context; test with
// errors.Is.
var (
	// ErrCorrupt reports bytes that do not decode to entries: a bad side
	// byte, white discs on empty squares, or a truncated record (which also
	// wraps io.ErrUnexpectedEOF).
	ErrCorrupt = errors.New("dedup: corrupt run")
	// ErrOrder reports an input that should be sorted by CompareEntries and
	// is not. Merging it would silently produce duplicates, so it is refused.
	ErrOrder = errors.New("dedup: run out of order")
)

// Ref names a parent position: the index of its ply's final blob and its
// index within that blob.
type Ref struct{ Blob, Index uint32 }

// Entry is one edge in a sorted run: a child position and one parent that
// leads to it.
type Entry struct {
	Pos board.Position
	Ref Ref
}

// EntryLen is the encoded size of an Entry: the 17-byte position key, then
// Ref.Blob and Ref.Index as big-endian uint32. Every field is big-endian so
// that byte order of encoded entries equals CompareEntries order.
const EntryLen = board.KeyLen + 8

// CompareEntries orders entries by position (board.Compare), then by
// Ref.Blob, then by Ref.Index.
func CompareEntries(a, b Entry) int {
	if c := board.Compare(a.Pos, b.Pos); c != 0 {
		return c
	}
	switch {
	case a.Ref.Blob != b.Ref.Blob:
		if a.Ref.Blob < b.Ref.Blob {
			return -1
		}
		return 1
	case a.Ref.Index != b.Ref.Index:
		if a.Ref.Index < b.Ref.Index {
			return -1
		}
		return 1
	}
	return 0
}

// less is CompareEntries(*a, *b) < 0, written out so that the sort and
// merge inner loops do not pay for a call and a three-way result.
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

// AppendEntry appends the EntryLen-byte encoding of e to dst.
func AppendEntry(dst []byte, e Entry) []byte {
	dst = e.Pos.AppendKey(dst)
	dst = binary.BigEndian.AppendUint32(dst, e.Ref.Blob)
	return binary.BigEndian.AppendUint32(dst, e.Ref.Index)
}

// DecodeEntry decodes exactly EntryLen bytes made by AppendEntry. Runs come
// from storage, which any bug or crash may have left damaged, so it checks
// what it can without knowing the board size: the side byte is 0 or 1 and
// the white discs are a subset of the occupied squares.
func DecodeEntry(b []byte) (Entry, error) {
	if len(b) != EntryLen {
		return Entry{}, fmt.Errorf("%w: entry has length %d, want %d", ErrCorrupt, len(b), EntryLen)
	}
	return decodeEntry(b)
}

// decodeEntry decodes the first EntryLen bytes of b, which must have at
// least that many.
func decodeEntry(b []byte) (Entry, error) {
	b = b[:EntryLen]
	e := Entry{
		Pos: board.Position{
			Side:  board.Color(b[0]),
			Occ:   binary.BigEndian.Uint64(b[1:9]),
			White: binary.BigEndian.Uint64(b[9:17]),
		},
		Ref: Ref{
			Blob:  binary.BigEndian.Uint32(b[17:21]),
			Index: binary.BigEndian.Uint32(b[21:25]),
		},
	}
	if b[0] > 1 {
		return Entry{}, fmt.Errorf("%w: entry %x: side byte %d is neither 0 nor 1", ErrCorrupt, b, b[0])
	}
	if stray := e.Pos.White &^ e.Pos.Occ; stray != 0 {
		return Entry{}, fmt.Errorf("%w: entry %x: white discs on unoccupied squares %#016x", ErrCorrupt, b, stray)
	}
	return e, nil
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

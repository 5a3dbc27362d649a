package packed

import (
	"encoding/binary"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
)

// A terminal list names the terminal positions of one final blob, with
// the number of positions the blob holds: all that the resolution of a
// target ply needs when the run does not solve it, where every other
// position's result is unknown. The merge that writes the blob knows
// which positions are terminal, so the resolution need not read the
// blob's keys and test each one again: at 8x8 ply 14, 6.2 billion
// positions read and tested for 46,489 terminal ones. At a ply before
// the target the resolution reads the keys, to decide from the
// children's notices, but still tests none (912 million at ply 13).
//
// Layout: the version byte, then uvarints for the blob's positions and
// the number of entries, then for each entry the uvarint of its index
// less the previous entry's index and one (the first: its index), its
// side to move (one byte) and its occupancy and white discs (8 bytes
// each, little-endian). Indexes increase, and each is below the count.

// terminalListVersion is the first byte of a terminal list.
const terminalListVersion = 1

// TerminalList is the terminal positions of a final blob of Count
// positions: Positions[i] is position Indexes[i] of the blob.
type TerminalList struct {
	Count     int64
	Indexes   []int64
	Positions []board.Position
}

// Add appends position i of the blob, which must come after the last.
func (l *TerminalList) Add(i int64, p board.Position) {
	l.Indexes = append(l.Indexes, i)
	l.Positions = append(l.Positions, p)
}

// Matches checks l against the keys of its blob: as many positions, and
// each listed one where its index says. It wraps ErrCorrupt.
func (l TerminalList) Matches(keys []board.Position) error {
	if l.Count != int64(len(keys)) {
		return fmt.Errorf("%w: a terminal list of %d positions, where the blob holds %d", ErrCorrupt, l.Count, len(keys))
	}
	for j, i := range l.Indexes {
		if keys[i] != l.Positions[j] {
			return fmt.Errorf("%w: terminal list entry %d names position %d %v, where the blob holds %v", ErrCorrupt, j, i, l.Positions[j], keys[i])
		}
	}
	return nil
}

// Reset empties l for another blob, keeping its memory.
func (l *TerminalList) Reset() {
	*l = TerminalList{Indexes: l.Indexes[:0], Positions: l.Positions[:0]}
}

// Append appends l's encoding to dst.
func (l *TerminalList) Append(dst []byte) []byte {
	dst = append(dst, terminalListVersion)
	dst = binary.AppendUvarint(dst, uint64(l.Count))
	dst = binary.AppendUvarint(dst, uint64(len(l.Indexes)))
	prev := int64(-1)
	for j, i := range l.Indexes {
		p := l.Positions[j]
		dst = binary.AppendUvarint(dst, uint64(i-prev-1))
		dst = append(dst, byte(p.Side))
		dst = binary.LittleEndian.AppendUint64(dst, p.Occ)
		dst = binary.LittleEndian.AppendUint64(dst, p.White)
		prev = i
	}
	return dst
}

// DecodeTerminalList decodes what Append wrote. It refuses, wrapping
// ErrCorrupt, bytes that are not a whole list, indexes that do not
// increase or reach the count, and positions that are not positions of
// b; an unknown version wraps ErrVersion.
func DecodeTerminalList(b *board.Board, data []byte) (TerminalList, error) {
	bad := func(format string, args ...any) (TerminalList, error) {
		return TerminalList{}, fmt.Errorf("%w: terminal list: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) == 0 {
		return bad("empty")
	}
	if data[0] != terminalListVersion {
		return TerminalList{}, fmt.Errorf("%w %d of a terminal list", ErrVersion, data[0])
	}
	data = data[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(data)
		if n <= 0 {
			return 0, false
		}
		data = data[n:]
		return v, true
	}
	count, ok1 := next()
	entries, ok2 := next()
	const entryBytes = 1 + 1 + 8 + 8 // the shortest entry
	if !ok1 || !ok2 || count > 1<<40 || entries > count || entries > uint64(len(data)/entryBytes) {
		return bad("a count of %d positions and %d entries in %d bytes", count, entries, len(data))
	}
	l := TerminalList{Count: int64(count), Indexes: make([]int64, 0, entries), Positions: make([]board.Position, 0, entries)}
	next64 := func() uint64 {
		v := binary.LittleEndian.Uint64(data)
		data = data[8:]
		return v
	}
	prev := int64(-1)
	for range entries {
		d, ok := next()
		if !ok || d >= count || len(data) < 17 {
			return bad("entry %d is cut short or out of range", len(l.Indexes))
		}
		i := prev + 1 + int64(d)
		side := data[0]
		data = data[1:]
		p := board.Position{Side: board.Color(side), Occ: next64(), White: next64()}
		if i >= l.Count || side > 1 {
			return bad("entry %d: index %d of %d, side %d", len(l.Indexes), i, l.Count, side)
		}
		if err := b.Valid(p); err != nil {
			return bad("entry %d: %v", len(l.Indexes), err)
		}
		l.Add(i, p)
		prev = i
	}
	if len(data) != 0 {
		return bad("%d bytes after the last entry", len(data))
	}
	return l, nil
}

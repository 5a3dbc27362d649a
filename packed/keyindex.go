package packed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"

	"github.com/reversi-cloud/reversi/board"
)

// The key index ends a key blob, so that a reader holding only an
// io.ReaderAt finds the block of position number i, or the block that may
// hold a key, with two small ranged reads (footer, then index) and reads
// that one block. It is one block of kind index, whose count is the
// number of key blocks (possibly 0) and whose payload holds, per key
// block, a fixed-width record
//
//	first key (17 bytes, board key order) | offset uint64 | number of its first position uint64
//
// then the footer, fixed size:
//
//	index offset uint64 | index length uint32 | positions uint64 | index CRC-32C uint32 |
//	footer CRC-32C uint32 (of the 24 bytes before it) | version | magic "RPK"
//
// with integers little-endian. The index CRC is the index block's own
// checksum, repeated so that the footer names exactly the index it goes
// with.
const (
	indexRecordLen = board.KeyLen + 16
	// FooterLen is the size of a key blob's footer: a reader that fetches
	// the last FooterLen bytes, then the index they name, knows every block.
	FooterLen = 32
)

var footerMagic = [3]byte{'R', 'P', 'K'}

type indexEntry struct {
	first  board.Position
	off    int64
	number int64
}

func (w *KeyWriter) writeIndex() error {
	payload := make([]byte, 0, len(w.index)*indexRecordLen)
	for _, e := range w.index {
		payload = e.first.AppendKey(payload)
		payload = binary.LittleEndian.AppendUint64(payload, uint64(e.off))
		payload = binary.LittleEndian.AppendUint64(payload, uint64(e.number))
	}
	off := w.blocks.off
	w.blocks.kind = kindIndex
	if err := w.blocks.write(len(w.index), payload); err != nil {
		return err
	}
	w.blocks.kind = kindKeys
	frame := w.blocks.frame
	f := binary.LittleEndian.AppendUint64(nil, uint64(off))
	f = binary.LittleEndian.AppendUint32(f, uint32(len(frame)))
	f = binary.LittleEndian.AppendUint64(f, uint64(w.count))
	f = append(f, frame[len(frame)-crcLen:]...)
	f = binary.LittleEndian.AppendUint32(f, crc32.Checksum(f, castagnoli))
	f = append(f, version)
	f = append(f, footerMagic[:]...)
	n, err := w.blocks.w.Write(f)
	w.blocks.off += int64(n)
	if err != nil {
		w.blocks.err = fmt.Errorf("packed: writing key footer: %w", err)
	}
	return w.blocks.err
}

// KeyIndex locates the blocks of a key blob.
type KeyIndex struct {
	// Positions is the number of positions in the blob.
	Positions int64
	blocks    []indexEntry
	end       int64 // offset of the index: the end of the last key block
}

// OpenKeyIndex reads the footer and the index of the key blob of size
// bytes in r.
func OpenKeyIndex(r io.ReaderAt, size int64) (*KeyIndex, error) {
	if size < FooterLen {
		return nil, fmt.Errorf("%w: key blob of %d bytes has no footer: %w", ErrCorrupt, size, io.ErrUnexpectedEOF)
	}
	var f [FooterLen]byte
	if _, err := r.ReadAt(f[:], size-FooterLen); err != nil {
		return nil, fmt.Errorf("packed: reading key footer: %w", err)
	}
	ix, indexLen, indexCRC, err := parseFooter(f[:], size)
	if err != nil {
		return nil, err
	}
	block := make([]byte, indexLen)
	if _, err := r.ReadAt(block, ix.end); err != nil {
		return nil, fmt.Errorf("packed: reading key index: %w", err)
	}
	if err := ix.parseIndex(block, indexCRC); err != nil {
		return nil, err
	}
	return ix, nil
}

func parseFooter(f []byte, size int64) (ix *KeyIndex, indexLen int64, indexCRC []byte, err error) {
	if !bytes.Equal(f[29:], footerMagic[:]) {
		return nil, 0, nil, fmt.Errorf("%w: key footer has bad magic %x", ErrCorrupt, f[29:])
	}
	if f[28] != version {
		return nil, 0, nil, fmt.Errorf("key footer: %w %d", ErrVersion, f[28])
	}
	if crc32.Checksum(f[:24], castagnoli) != binary.LittleEndian.Uint32(f[24:]) {
		return nil, 0, nil, fmt.Errorf("%w: key footer checksum mismatch", ErrCorrupt)
	}
	off, n := binary.LittleEndian.Uint64(f), int64(binary.LittleEndian.Uint32(f[8:]))
	positions := binary.LittleEndian.Uint64(f[12:])
	if off > uint64(size) || int64(off)+n+FooterLen != size || n < headerLen+crcLen || positions > 1<<62 {
		return nil, 0, nil, fmt.Errorf("%w: key footer names an index of %d bytes at %d in a blob of %d", ErrCorrupt, n, off, size)
	}
	return &KeyIndex{Positions: int64(positions), end: int64(off)}, n, f[20:24], nil
}

// parseIndex checks the index block and its records: offsets and
// position numbers that start at 0 and increase, keys that increase.
func (ix *KeyIndex) parseIndex(block, indexCRC []byte) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: key index: %s", ErrCorrupt, fmt.Sprintf(format, a...))
	}
	if err := checkCRC(block); err != nil {
		return fmt.Errorf("key index: %w", err)
	}
	if !bytes.Equal(block[len(block)-crcLen:], indexCRC) {
		return bad("checksum differs from the footer's")
	}
	h := block[:headerLen]
	if h[0] != magic0 || h[1] != magic1 || h[3] != kindIndex {
		return bad("bad block header %x", h)
	}
	if h[2] != version {
		return fmt.Errorf("key index: %w %d", ErrVersion, h[2])
	}
	count, size := int(binary.LittleEndian.Uint32(h[4:])), int(binary.LittleEndian.Uint32(h[8:]))
	payload := block[headerLen : len(block)-crcLen]
	if size != len(payload) || count*indexRecordLen != size {
		return bad("%d records in %d bytes", count, size)
	}
	if count == 0 && ix.Positions != 0 || count > 0 && ix.Positions == 0 {
		return bad("%d blocks for %d positions", count, ix.Positions)
	}
	ix.blocks = make([]indexEntry, count)
	for i := range ix.blocks {
		rec := payload[i*indexRecordLen:]
		e := &ix.blocks[i]
		e.first = board.Position{
			Side:  board.Color(rec[0]),
			Occ:   binary.BigEndian.Uint64(rec[1:]),
			White: binary.BigEndian.Uint64(rec[9:]),
		}
		off, num := binary.LittleEndian.Uint64(rec[17:]), binary.LittleEndian.Uint64(rec[25:])
		if rec[0] > 1 || e.first.White&^e.first.Occ != 0 {
			return bad("block %d has an invalid first key %x", i, rec[:board.KeyLen])
		}
		if off >= uint64(ix.end) || num >= uint64(ix.Positions) {
			return bad("block %d at offset %d, position %d, is out of range", i, off, num)
		}
		e.off, e.number = int64(off), int64(num)
		if i == 0 && (e.off != 0 || e.number != 0) {
			return bad("the first block is at offset %d, position %d", e.off, e.number)
		}
		if i > 0 {
			p := ix.blocks[i-1]
			if e.off <= p.off || e.number <= p.number || board.Compare(e.first, p.first) <= 0 {
				return bad("block %d does not follow block %d", i, i-1)
			}
		}
	}
	return nil
}

// Blocks returns the number of key blocks.
func (ix *KeyIndex) Blocks() int { return len(ix.blocks) }

// Block describes key block j: its byte range in the blob, the number of
// its first position and how many positions it holds.
func (ix *KeyIndex) Block(j int) (off, n, first, count int64) {
	e := ix.blocks[j]
	end, last := ix.end, ix.Positions
	if j+1 < len(ix.blocks) {
		end, last = ix.blocks[j+1].off, ix.blocks[j+1].number
	}
	return e.off, end - e.off, e.number, last - e.number
}

// BlockOfPosition returns the key block holding position number i, which
// must be below Positions.
func (ix *KeyIndex) BlockOfPosition(i int64) int {
	return sort.Search(len(ix.blocks), func(j int) bool { return ix.blocks[j].number > i }) - 1
}

// BlockOfKey returns the only key block that may hold p, or -1 if p sorts
// before every position of the blob.
func (ix *KeyIndex) BlockOfKey(p board.Position) int {
	return sort.Search(len(ix.blocks), func(j int) bool { return board.Compare(ix.blocks[j].first, p) > 0 }) - 1
}

// ReadKeyAt returns position number i of the key blob indexed by ix in r.
func ReadKeyAt(r io.ReaderAt, ix *KeyIndex, i int64) (board.Position, error) {
	if i < 0 || i >= ix.Positions {
		return board.Position{}, fmt.Errorf("packed: position %d of a key blob of %d", i, ix.Positions)
	}
	j := ix.BlockOfPosition(i)
	off, n, first, _ := ix.Block(j)
	kr := newKeyReader(io.NewSectionReader(r, off, n))
	for k := first; ; k++ {
		p, ok := kr.Next()
		if !ok {
			return board.Position{}, blockEnded(kr.Err(), j)
		}
		if k == i {
			return p, nil
		}
	}
}

// FindKey returns the number of position p in the key blob indexed by ix
// in r, and whether it is there; if not, the number is where p would go.
func FindKey(r io.ReaderAt, ix *KeyIndex, p board.Position) (int64, bool, error) {
	j := ix.BlockOfKey(p)
	if j < 0 {
		return 0, false, nil
	}
	off, n, first, count := ix.Block(j)
	kr := newKeyReader(io.NewSectionReader(r, off, n))
	for k := first; k < first+count; k++ {
		q, ok := kr.Next()
		if !ok {
			return 0, false, blockEnded(kr.Err(), j)
		}
		if c := board.Compare(q, p); c >= 0 {
			return k, c == 0, nil
		}
	}
	return first + count, false, nil
}

// blockEnded is the error for a key block that ended before the index
// said it would.
func blockEnded(err error, j int) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: key block %d holds fewer positions than the index says", ErrCorrupt, j)
}

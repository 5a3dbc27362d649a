package board

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrSyntax reports a key or text that does not encode a position.
var ErrSyntax = errors.New("board: malformed position")

// AppendKey appends the 17-byte binary key of p: the side byte (0 black,
// 1 white), then Occ and White big-endian. Big-endian makes byte order equal
// Compare order, so sorted key streams need no decoding to merge.
func (p Position) AppendKey(dst []byte) []byte {
	dst = append(dst, byte(p.Side))
	dst = binary.BigEndian.AppendUint64(dst, p.Occ)
	return binary.BigEndian.AppendUint64(dst, p.White)
}

const hexDigits = "0123456789abcdef"

// Text returns the 33-character text key of p: 'b' or 'w' for the side to
// move, then Occ and White as 16 lowercase hex digits each. Fixed width and
// 'b' < 'w' make string order equal Compare order, and the alphabet is safe
// in Azure table keys, blob names and queue messages.
func (p Position) Text() string {
	var buf [TextLen]byte
	buf[0] = 'b'
	if p.Side == White {
		buf[0] = 'w'
	}
	putHex(buf[1:17], p.Occ)
	putHex(buf[17:33], p.White)
	return string(buf[:])
}

func putHex(dst []byte, x uint64) {
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[x&15]
		x >>= 4
	}
}

// String returns Text, so positions print as their keys.
func (p Position) String() string { return p.Text() }

// parseHex reads 16 lowercase hex digits. Upper case is refused so that each
// position has exactly one text key: keys are compared as strings.
func parseHex(s string) (uint64, error) {
	var x uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, fmt.Errorf("character %d is %q, want a lowercase hex digit", i, c)
		}
		x = x<<4 | uint64(d)
	}
	return x, nil
}

// ParseText decodes a text key made by Position.Text and checks that the
// position fits this board.
func (b *Board) ParseText(s string) (Position, error) {
	if len(s) != TextLen {
		return Position{}, fmt.Errorf("%w: text key %.40q has length %d, want %d", ErrSyntax, s, len(s), TextLen)
	}
	var p Position
	switch s[0] {
	case 'b':
		p.Side = Black
	case 'w':
		p.Side = White
	default:
		return Position{}, fmt.Errorf("%w: text key %q: side %q is neither 'b' nor 'w'", ErrSyntax, s, s[0])
	}
	var err error
	if p.Occ, err = parseHex(s[1:17]); err != nil {
		return Position{}, fmt.Errorf("%w: text key %q: occupancy: %v", ErrSyntax, s, err)
	}
	if p.White, err = parseHex(s[17:33]); err != nil {
		return Position{}, fmt.Errorf("%w: text key %q: white discs: %v", ErrSyntax, s, err)
	}
	if err := b.Valid(p); err != nil {
		return Position{}, fmt.Errorf("text key %q: %w", s, err)
	}
	return p, nil
}

// DecodeKey decodes a binary key made by Position.AppendKey and checks that
// the position fits this board.
func (b *Board) DecodeKey(k []byte) (Position, error) {
	if len(k) != KeyLen {
		return Position{}, fmt.Errorf("%w: binary key has length %d, want %d", ErrSyntax, len(k), KeyLen)
	}
	if k[0] > 1 {
		return Position{}, fmt.Errorf("%w: binary key %x: side byte %d is neither 0 nor 1", ErrSyntax, k, k[0])
	}
	p := Position{
		Side:  Color(k[0]),
		Occ:   binary.BigEndian.Uint64(k[1:9]),
		White: binary.BigEndian.Uint64(k[9:17]),
	}
	if err := b.Valid(p); err != nil {
		return Position{}, fmt.Errorf("binary key %x: %w", k, err)
	}
	return p, nil
}

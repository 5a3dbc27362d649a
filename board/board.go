// Package board is the Reversi rules engine shared by every part of the
// project: bitboard positions, legal moves, passes folded into moves, the
// eight board symmetries and canonical forms, and the key encodings that
// storage sorts by.
//
// One coordinate frame serves all board sizes. Square (column c, row r),
// 0-based, has bit index r*8 + c; a1 is the top-left corner (0, 0). A 4x4 or
// 6x6 board uses the top-left n x n corner of the 8x8 frame, so a position's
// masks mean the same thing whatever the size, and keys of different sizes
// never need a size field to be decoded by the right Board.
package board

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/reversi-cloud/reversi/board/lines"
)

// KeyLen is the length in bytes of a binary position key (see
// Position.AppendKey).
const KeyLen = 17

// TextLen is the length in characters of a text position key (see
// Position.Text).
const TextLen = 33

// Color is a side: Black or White.
type Color uint8

// The two sides. Black moves first.
const (
	Black Color = 0
	White Color = 1
)

// Opponent returns the other side.
func (c Color) Opponent() Color { return c ^ 1 }

// String returns "black" or "white".
func (c Color) String() string {
	switch c {
	case Black:
		return "black"
	case White:
		return "white"
	}
	return fmt.Sprintf("Color(%d)", uint8(c))
}

// Result is the game-theoretic outcome of a position in absolute terms
// (which colour wins), so it does not change meaning when a folded pass
// leaves the same side to move in parent and child.
type Result uint8

// The four results. Unknown is the zero value so that a freshly allocated
// result table means "not decided yet".
const (
	Unknown   Result = 0
	BlackWins Result = 1
	WhiteWins Result = 2
	Draw      Result = 3
)

// String returns "unknown", "black", "white" or "draw", the spelling used in
// reports and storage.
func (r Result) String() string {
	switch r {
	case Unknown:
		return "unknown"
	case BlackWins:
		return "black"
	case WhiteWins:
		return "white"
	case Draw:
		return "draw"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// ParseResult is the inverse of Result.String.
func ParseResult(s string) (Result, error) {
	switch s {
	case "unknown":
		return Unknown, nil
	case "black":
		return BlackWins, nil
	case "white":
		return WhiteWins, nil
	case "draw":
		return Draw, nil
	}
	return Unknown, fmt.Errorf("board: parsing result %q: want unknown, black, white or draw", s)
}

// WinFor returns the result in which c wins.
func WinFor(c Color) Result {
	if c == White {
		return WhiteWins
	}
	return BlackWins
}

// Position is a board plus side to move. Bit r*8+c of each mask is square
// (column c, row r) for every board size.
type Position struct {
	Occ   uint64 // occupied squares
	White uint64 // white discs, a subset of Occ
	Side  Color  // side to move
}

// Black returns the black discs.
func (p Position) Black() uint64 { return p.Occ &^ p.White }

// Mover returns the discs of the side to move.
func (p Position) Mover() uint64 {
	if p.Side == White {
		return p.White
	}
	return p.Occ &^ p.White
}

// Opponent returns the discs of the side not to move.
func (p Position) Opponent() uint64 {
	if p.Side == White {
		return p.Occ &^ p.White
	}
	return p.White
}

// Discs returns the number of discs on the board.
func (p Position) Discs() int { return bits.OnesCount64(p.Occ) }

// Compare orders positions by (Side, Occ, White), each compared as unsigned.
// It is the byte order of both AppendKey and Text, so sorted keys in storage
// and sorted positions in memory agree.
func Compare(a, b Position) int {
	switch {
	case a.Side != b.Side:
		if a.Side < b.Side {
			return -1
		}
		return 1
	case a.Occ != b.Occ:
		if a.Occ < b.Occ {
			return -1
		}
		return 1
	case a.White != b.White:
		if a.White < b.White {
			return -1
		}
		return 1
	}
	return 0
}

// Column masks of the 8x8 frame.
const (
	colA uint64 = 0x0101010101010101
	colH uint64 = 0x8080808080808080
)

// Board holds the size-specific masks. It is immutable and safe for
// concurrent use.
type Board struct {
	size  int
	mask  uint64 // squares on the board
	maskE uint64 // destinations of a step towards higher columns: no wrap into column a
	maskW uint64 // destinations of a step towards lower columns: no wrap into column h
	shift uint   // 8 - size: realigns an 8x8 reflection onto the top-left corner
	start Position
	// squareImages are the images of each square under the eight
	// symmetries (images), so that a child's occupancy images are its
	// parent's with the played square's or-ed in (ChildrenTerminal).
	squareImages [64][8]uint64
}

// ErrSize reports an unsupported board size.
var ErrSize = errors.New("board: size must be 4, 6 or 8")

// New returns the board of the given size: 4, 6 or 8. Odd sizes have no
// centre 2x2, and sizes above 8 do not fit a 64-bit mask. Boards are
// immutable, so every call for a size returns the same one, built once:
// a run's configuration asks for its board at every check and decode.
func New(size int) (*Board, error) {
	if b, ok := boards()[size]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%w, got %d", ErrSize, size)
}

// boards holds the one board of each size, built on first use.
var boards = sync.OnceValue(func() map[int]*Board {
	return map[int]*Board{4: build(4), 6: build(6), 8: build(8)}
})

// build computes the board of a valid size.
func build(size int) *Board {
	b := &Board{size: size, shift: uint(8 - size)}
	row := uint64(1)<<size - 1
	for r := 0; r < size; r++ {
		b.mask |= row << (8 * r)
	}
	b.maskE = b.mask &^ colA
	b.maskW = b.mask &^ colH
	h := size/2 - 1
	tl := uint64(1) << (h*8 + h)
	tr, bl, br := tl<<1, tl<<8, tl<<9
	b.start = Position{Occ: tl | tr | bl | br, White: tl | br, Side: Black}
	for sq := range 64 {
		r0, c0 := sq/8, sq%8
		if !b.inside(r0, c0) {
			continue
		}
		b.squareImages[sq] = b.images(1 << sq)
	}
	return b
}

// MustNew is New for sizes known to be valid; it panics otherwise.
func MustNew(size int) *Board {
	b, err := New(size)
	if err != nil {
		panic(err)
	}
	return b
}

// Size returns the side length of the board.
func (b *Board) Size() int { return b.size }

// Mask returns the squares on the board.
func (b *Board) Mask() uint64 { return b.mask }

// Start returns the initial position: the centre 2x2 with white on its
// top-left and bottom-right squares, black to move.
func (b *Board) Start() Position { return b.start }

// Ply returns the number of discs placed since the start.
func (b *Board) Ply(p Position) int { return p.Discs() - 4 }

// fillUp returns gen plus every square reachable from it by repeated steps
// of +s through pro: a Kogge-Stone occluded fill, three rounds for up to
// seven steps, so no loop over squares or run lengths.
func fillUp(gen, pro uint64, s uint) uint64 {
	gen |= pro & (gen << s)
	pro &= pro << s
	gen |= pro & (gen << (2 * s))
	pro &= pro << (2 * s)
	gen |= pro & (gen << (4 * s))
	return gen
}

// fillDown is fillUp for steps of -s.
func fillDown(gen, pro uint64, s uint) uint64 {
	gen |= pro & (gen >> s)
	pro &= pro >> s
	gen |= pro & (gen >> (2 * s))
	pro &= pro >> (2 * s)
	gen |= pro & (gen >> (4 * s))
	return gen
}

// moves returns the squares where a disc of own would bracket a run of opp.
// Steps of ±1, ±7 and ±9 change the column and must not wrap from one edge
// of the frame to the other, so the runs they cross and the squares they
// land on are masked by the column they cannot reach.
func (b *Board) moves(own, opp, occ uint64) uint64 {
	empty := b.mask &^ occ
	emptyE, emptyW := empty&b.maskE, empty&b.maskW
	oppE, oppW := opp&b.maskE, opp&b.maskW
	var m uint64
	m |= ((fillUp(own, oppE, 1) &^ own) << 1) & emptyE
	m |= ((fillDown(own, oppW, 1) &^ own) >> 1) & emptyW
	m |= ((fillUp(own, opp, 8) &^ own) << 8) & empty
	m |= ((fillDown(own, opp, 8) &^ own) >> 8) & empty
	m |= ((fillUp(own, oppE, 9) &^ own) << 9) & emptyE
	m |= ((fillDown(own, oppW, 9) &^ own) >> 9) & emptyW
	m |= ((fillUp(own, oppW, 7) &^ own) << 7) & emptyW
	m |= ((fillDown(own, oppE, 7) &^ own) >> 7) & emptyE
	return m
}

// Moves returns the legal squares for the side to move.
func (b *Board) Moves(p Position) uint64 {
	return b.moves(p.Mover(), p.Opponent(), p.Occ)
}

// Flips returns the discs the side to move flips by playing sq, or 0 if sq
// is not a legal move (off the board, occupied, or flipping nothing).
func (b *Board) Flips(p Position, sq int) uint64 {
	if sq < 0 || sq > 63 || (b.mask&^p.Occ)>>uint(sq)&1 == 0 {
		return 0
	}
	return lines.Flips(sq, p.Mover(), p.Opponent())
}

// ErrIllegal reports a move that is not legal in the position.
var ErrIllegal = errors.New("board: illegal move")

// Play plays sq for the side to move. The turn passes to the opponent,
// except that when the opponent has no legal move and the mover still has
// one, the pass is folded in and the mover moves again: positions are stored
// with a side that can actually move. A terminal result keeps the opponent
// to move, the side that simple alternation gives.
func (b *Board) Play(p Position, sq int) (Position, error) {
	f := b.Flips(p, sq)
	if f == 0 {
		return p, fmt.Errorf("%w: %s for %s in %s", ErrIllegal, b.SquareName(sq), p.Side, p.Text())
	}
	c, _ := b.apply(p, sq, f)
	return c, nil
}

// apply plays a move already known to be legal, with its flips, and
// reports whether the position it reaches is terminal: apply has asked
// both sides for a move by then, so Children learns it for nothing.
func (b *Board) apply(p Position, sq int, f uint64) (Position, bool) {
	x := uint64(1) << uint(sq)
	own := p.Mover() | f | x
	opp := p.Opponent() &^ f
	occ := p.Occ | x
	if b.canMove(opp, own, occ) {
		return withSides(occ, opp, p.Side.Opponent()), false
	}
	if b.canMove(own, opp, occ) {
		return withSides(occ, own, p.Side), false
	}
	return withSides(occ, opp, p.Side.Opponent()), true
}

// withSides builds a position from the discs of the side to move.
func withSides(occ, mover uint64, side Color) Position {
	if side == White {
		return Position{Occ: occ, White: mover, Side: White}
	}
	return Position{Occ: occ, White: occ &^ mover, Side: Black}
}

// Terminal reports whether neither side can move.
func (b *Board) Terminal(p Position) bool {
	own, opp := p.Mover(), p.Opponent()
	return !b.canMove(own, opp, p.Occ) && !b.canMove(opp, own, p.Occ)
}

// canMove reports whether moves(own, opp, occ) is not empty, trying the
// directions two at a time and stopping at the first pair with a move.
// apply asks it of every child generated (does the next mover have a
// move?), and Terminal of a ply's every position twice in an enumeration
// (the merge that writes the position, the resolution that scores it);
// most positions' mover has a move, so most calls stop before
// generating every direction (BenchmarkChildren: 577 against 665 ns a
// position when apply generated all of them). It repeats moves'
// lines axis by axis, kept equal by the tests against the simple rules:
// a function of one axis that both call is too large for the compiler
// to inline, and made moves and Children much slower.
func (b *Board) canMove(own, opp, occ uint64) bool {
	empty := b.mask &^ occ
	emptyE, emptyW := empty&b.maskE, empty&b.maskW
	oppE, oppW := opp&b.maskE, opp&b.maskW
	return ((fillUp(own, oppE, 1)&^own)<<1)&emptyE|((fillDown(own, oppW, 1)&^own)>>1)&emptyW != 0 ||
		((fillUp(own, opp, 8)&^own)<<8)&empty|((fillDown(own, opp, 8)&^own)>>8)&empty != 0 ||
		((fillUp(own, oppE, 9)&^own)<<9)&emptyE|((fillDown(own, oppW, 9)&^own)>>9)&emptyW != 0 ||
		((fillUp(own, oppW, 7)&^own)<<7)&emptyW|((fillDown(own, oppE, 7)&^own)>>7)&emptyE != 0
}

// Result scores the position by disc count, empty squares going to nobody.
// It is the game's result only for terminal positions.
func (b *Board) Result(p Position) Result {
	w := bits.OnesCount64(p.White)
	bl := bits.OnesCount64(p.Occ) - w
	switch {
	case bl > w:
		return BlackWins
	case w > bl:
		return WhiteWins
	}
	return Draw
}

// Children appends the distinct canonical children of p to dst, with passes
// folded as Play does, and returns dst and the number of legal moves of p.
// Children are deduplicated by a scan of what this call appended: a position
// has at most a few dozen moves, so the scan is cheaper than a set and keeps
// the call allocation-free when dst has capacity.
func (b *Board) Children(p Position, dst []Position) ([]Position, int) {
	dst, n, _ := b.ChildrenTerminal(p, dst)
	return dst, n
}

// ChildrenTerminal is Children that also says which children are
// terminal: bit i of terminal is set if the i-th child it appended is.
// Finding it costs nothing more (apply), where Terminal would ask both
// sides for a move again. A position has at most 60 moves, so the bits
// fit.
func (b *Board) ChildrenTerminal(p Position, dst []Position) (kids []Position, moves int, terminal uint64) {
	own, opp := p.Mover(), p.Opponent()
	m := b.moves(own, opp, p.Occ)
	moves = bits.OnesCount64(m)
	base := len(dst)
	if m == 0 {
		return dst, 0, 0
	}
	// A symmetry permutes squares, so the image of a child's occupancy,
	// the parent's and one square more, is the parent's image and the
	// square's: eight ors, where images reflects the whole mask again.
	parent := b.images(p.Occ)
	// seen has a bit for each child's occupancy, by a hash of it: two
	// moves reach the same child only if the two share an occupancy, so a
	// child whose bit is clear is new without the scan of the children
	// before it, which took a twelfth of the generation's time.
	var seen uint64
	for ; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		c, end := b.apply(p, sq, lines.Flips(sq, own, opp))
		c = b.canonical(c, &parent, &b.squareImages[sq])
		bit := uint64(1) << (c.Occ * occHash >> 58)
		if seen&bit != 0 && slices.Contains(dst[base:], c) {
			continue
		}
		seen |= bit
		if end {
			terminal |= 1 << uint(len(dst)-base)
		}
		dst = append(dst, c)
	}
	return dst, moves, terminal
}

// occHash spreads an occupancy's bits into the top six of the product
// (Fibonacci hashing), ChildrenTerminal's bit for it.
const occHash = 0x9e3779b97f4a7c15

// appendDistinct appends c to dst unless dst[base:] holds it already.
func appendDistinct(dst []Position, base int, c Position) []Position {
	for _, d := range dst[base:] {
		if d == c {
			return dst
		}
	}
	return append(dst, c)
}

// ErrInvalid reports a position that cannot be on this board.
var ErrInvalid = errors.New("board: invalid position")

// Valid checks that the position fits the board: side 0 or 1, discs only on
// the board, white discs only on occupied squares.
func (b *Board) Valid(p Position) error {
	if p.Side > White {
		return fmt.Errorf("%w: side %d is neither black nor white", ErrInvalid, p.Side)
	}
	if off := p.Occ &^ b.mask; off != 0 {
		return fmt.Errorf("%w: discs off the %dx%d board at %#016x", ErrInvalid, b.size, b.size, off)
	}
	if stray := p.White &^ p.Occ; stray != 0 {
		return fmt.Errorf("%w: white discs on unoccupied squares %#016x", ErrInvalid, stray)
	}
	return nil
}

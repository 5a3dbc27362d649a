// Package backtrack holds what lets results flow back from terminal
// positions toward the start: the rules that decide a parent from its
// children's results, and the packed rows that record, for each child, the
// parents that lead to it (the article's Source) and, for each parent, the
// results its children have reported (notices).
//
// The article writes one table row per edge. That costs more than one
// storage transaction per edge, so rows here pack many edges: a row holds
// the sources of a run of consecutive children of one final blob, and a
// notice row holds every result one child blob reports to one parent blob.
// Every row is written whole by exactly one task with a key derived from
// that task, so writes are idempotent upserts and never read-modify-write.
package backtrack

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

// Tally accumulates the results of a parent's children.
type Tally struct {
	Known    uint16 // children with a known result
	BlackWin bool
	WhiteWin bool
	Draw     bool
	Scored   uint16 // children with an exact score
	Best     Score  // the best of those scores for the parent's side to move
	// Bounded counts the children whose notices bound their
	// differentials (an exact score, a bound or a result); lower and
	// upper are the best of those lower and upper bounds for the side to
	// move, as its own differential (see Bounds).
	Bounded      uint16
	lower, upper int8
}

// Add counts one child's notice to a parent whose side to move is side;
// unknown results and unknown scores are not counted.
func (t *Tally) Add(side board.Color, n Notice) {
	t.addBounds(side, n)
	switch n.Result {
	case board.BlackWins:
		t.BlackWin = true
	case board.WhiteWins:
		t.WhiteWin = true
	case board.Draw:
		t.Draw = true
	default:
		return
	}
	t.Known++
	if n.Score.Exact {
		if t.Scored == 0 || Better(side, n.Score, t.Best) {
			t.Best = n.Score
		}
		t.Scored++
	}
}

// Score is the parent's perfect-play score once every one of its
// distinct canonical children has reported one, else unknown.
func (t Tally) Score(children int) Score {
	if children == 0 || int(t.Scored) < children {
		return Score{}
	}
	return t.Best
}

// Score is a position's value under perfect play. The zero Score is
// unknown.
//
// Diff is what minimax works on: black's final disc count minus white's,
// the empty squares of a finished game going to the winner (the WOF rule
// of docs/reference.md, which package solve follows too). Where every
// line of play was followed to the end of the game, a score also holds a
// perfect-play final count, discs on the board; where a solver gave the
// score, it holds the differential alone.
type Score struct {
	Diff  int8 // black minus white, empty squares to the winner, when Exact
	Exact bool // Diff is known
	// Black and White are a perfect-play final count, or 0, 0.
	Black, White uint8
	// Bounded makes a score that is not Exact a pair of bounds: the
	// differential is at least Diff and at most Upper (the solve modes
	// root and wld prove no more than the start needs).
	Bounded bool
	Upper   int8
}

// Known reports whether s holds a perfect-play final count (and so an
// exact Diff too).
func (s Score) Known() bool { return s.Black != 0 || s.White != 0 }

// CountScore is the score of a game that ends with these disc counts on
// a board of squares squares.
func CountScore(black, white, squares int) Score {
	diff := 0
	switch {
	case black > white:
		diff = squares - 2*white
	case white > black:
		diff = 2*black - squares
	}
	return Score{Diff: int8(diff), Exact: true, Black: uint8(black), White: uint8(white)}
}

// DiffScore is an exact score known only as its differential, black
// minus white, empty squares to the winner.
func DiffScore(diff int) Score { return Score{Diff: int8(diff), Exact: true} }

// TerminalScore is the score of a position where the game is over.
func TerminalScore(b *board.Board, p board.Position) Score {
	w := bits.OnesCount64(p.White)
	return CountScore(p.Discs()-w, w, b.Size()*b.Size())
}

// Result is the result a score implies.
func (s Score) Result() board.Result {
	switch {
	case s.Bounded && s.Diff > 0:
		return board.BlackWins
	case s.Bounded && s.Upper < 0:
		return board.WhiteWins
	case !s.Exact:
		return board.Unknown
	case s.Diff > 0:
		return board.BlackWins
	case s.Diff < 0:
		return board.WhiteWins
	}
	return board.Draw
}

// Better reports whether a is a better exact score than b for side: a
// larger differential for side; at equal differentials, one with a final
// count first, then a larger margin of discs on the board for side, then
// more of side's own discs. These keys fix the score, so the best score
// among children is unique whatever order they report in.
func Better(side board.Color, a, b Score) bool {
	da, db := int(a.Diff), int(b.Diff)
	own, opp, bOwn, bOpp := int(a.Black), int(a.White), int(b.Black), int(b.White)
	if side == board.White {
		da, db = -da, -db
		own, opp, bOwn, bOpp = int(a.White), int(a.Black), int(b.White), int(b.Black)
	}
	switch {
	case da != db:
		return da > db
	case a.Known() != b.Known():
		return a.Known()
	case own-opp != bOwn-bOpp:
		return own-opp > bOwn-bOpp
	}
	return own > bOwn
}

// A score travels as a 14-bit word: black's and white's final counts, 7
// bits each, when it has them; otherwise diffOnly in black's bits and
// Diff/2+32 in white's (under the WOF rule a differential is even, as
// every board has an even number of squares); 0 when unknown. Bounds lo
// and hi are the number c = (lo/2+32)*65 + hi/2+32, below 65*65, as
// boundsBase+c/128 in black's bits and c%128 in white's: black's bits of
// a count are at most 64.
const (
	scoreBits  = 14
	diffOnly   = 0x7f
	boundsBase = 0x41
)

func (s Score) word() uint16 {
	switch {
	case s.Known():
		return uint16(s.Black&0x7f) | uint16(s.White&0x7f)<<7
	case s.Exact:
		return diffOnly | uint16(int(s.Diff)/2+32)<<7
	case s.Bounded:
		c := (int(s.Diff)/2+32)*65 + int(s.Upper)/2 + 32
		return uint16(boundsBase+c/128) | uint16(c%128)<<7
	}
	return 0
}

// scoreOf decodes a score word for a board of squares squares; ok is
// false for a word no score encodes to.
func scoreOf(v uint16, squares int) (s Score, ok bool) {
	black, white := int(v&0x7f), int(v>>7&0x7f)
	switch {
	case v == 0:
		return Score{}, true
	case black == diffOnly:
		d := 2 * (white - 32)
		return DiffScore(d), v < 1<<scoreBits && d >= -squares && d <= squares
	case black >= boundsBase:
		c := (black-boundsBase)*128 + white
		lo, hi := 2*(c/65-32), 2*(c%65-32)
		return BoundsScore(lo, hi), v < 1<<scoreBits && -squares <= lo && lo < hi && hi <= squares
	}
	return CountScore(black, white, squares), v < 1<<scoreBits && black+white <= squares
}

// Word packs one position's result and score into the word a results
// blob holds (packed.EncodeResults): the result in bits 0-1 and the score
// word in bits 2-15.
//
// Most positions have no score (at 8x8 ply 12, all but a few thousand of
// 137 million), and those skip the score's encoding: with it, writing
// the words was about a fifth of resolving that ply (a CPU profile).
func Word(r board.Result, s Score) uint16 {
	if s == (Score{}) {
		return uint16(r & 3)
	}
	return uint16(r&3) | s.word()<<2
}

// FromWord reads a results word of a board of squares squares. A score no
// word encodes to reads as unknown.
func FromWord(v uint16, squares int) (board.Result, Score) {
	s, _ := scoreOf(v>>2, squares)
	return board.Result(v & 3), s
}

// Decide applies the rules of docs/reference.md to a non-terminal
// position whose side to move is side and which has children distinct
// canonical children: won for the mover if any child is; otherwise, once
// every child is known, a draw if any child draws, else lost.
func Decide(side board.Color, children int, t Tally) board.Result {
	if side == board.Black && t.BlackWin {
		return board.BlackWins
	}
	if side == board.White && t.WhiteWin {
		return board.WhiteWins
	}
	if children == 0 || int(t.Known) < children {
		return board.Unknown
	}
	if t.Draw {
		return board.Draw
	}
	if side == board.Black {
		return board.WhiteWins
	}
	return board.BlackWins
}

// Ref names a parent: the index of its ply's final blob and its index
// there. A final blob's sources (each position's parents) are packed
// source blocks (packed.SourceWriter).
type Ref = packed.Ref

// Notice is one child's result reported to a parent.
type Notice struct {
	Index  uint32 // the parent's index in its final blob
	Result board.Result
	Score  Score // the child's perfect-play score, when known
}

// scoreFollows marks a notice's result byte when a score word follows
// (two bytes, little-endian); most notices carry none, as scores are
// known only where whole subtrees reached the end of the game or were
// solved.
const scoreFollows = 0x80

// AppendNotices encodes notices sorted by Index.
func AppendNotices(dst []byte, ns []Notice) []byte {
	var prev uint32
	for _, n := range ns {
		dst = binary.AppendUvarint(dst, uint64(n.Index-prev))
		if n.Score.Exact || n.Score.Bounded {
			dst = append(dst, byte(n.Result)|scoreFollows)
			dst = binary.LittleEndian.AppendUint16(dst, n.Score.word())
		} else {
			dst = append(dst, byte(n.Result))
		}
		prev = n.Index
	}
	return dst
}

// DecodeNotices calls fn for each notice in a payload from a board of
// squares squares.
func DecodeNotices(b []byte, squares int, fn func(Notice)) error {
	var idx uint64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+1 {
			return errors.New("backtrack: malformed notice payload")
		}
		idx += d
		flag := b[n]
		nt := Notice{Index: uint32(idx), Result: board.Result(flag &^ scoreFollows)}
		if idx > 0xffffffff || nt.Result > board.Draw {
			return errors.New("backtrack: notice out of range")
		}
		b = b[n+1:]
		if flag&scoreFollows != 0 {
			if len(b) < 2 {
				return errors.New("backtrack: malformed notice payload")
			}
			s, ok := scoreOf(binary.LittleEndian.Uint16(b), squares)
			if !ok || s == (Score{}) {
				return errors.New("backtrack: malformed score in notice payload")
			}
			nt.Score = s
			b = b[2:]
		}
		fn(nt)
	}
	return nil
}

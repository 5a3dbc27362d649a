// Package testkit holds small helpers that tests in several packages share.
package testkit

import (
	"bytes"
	"math/bits"
	"sync"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// Buffer is a bytes.Buffer that several goroutines may write at once, as
// worker loops logging to one handler do.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Ply returns the distinct canonical positions of ply n of b, in the
// order a breadth-first expansion from the start finds them.
func Ply(b *board.Board, n int) []board.Position {
	frontier := []board.Position{b.Start()}
	var kids []board.Position
	for range n {
		seen := map[board.Position]bool{}
		var next []board.Position
		for _, p := range frontier {
			kids, _ = b.Children(p, kids[:0])
			for _, k := range kids {
				if !seen[k] {
					seen[k] = true
					next = append(next, k)
				}
			}
		}
		frontier = next
	}
	return frontier
}

// PlayAll returns every position one move after those of ply, as played,
// without canonicalization: the brute-force expansion that counts without
// the symmetry reduction are checked against.
func PlayAll(t testing.TB, b *board.Board, ply map[board.Position]bool) map[board.Position]bool {
	t.Helper()
	next := make(map[board.Position]bool, len(ply)*8)
	for p := range ply {
		for m := b.Moves(p); m != 0; m &= m - 1 {
			q, err := b.Play(p, bits.TrailingZeros64(m))
			if err != nil {
				t.Fatal(err)
			}
			next[q] = true
		}
	}
	return next
}

// Ref4x4 is the 4x4 table of docs/reference.md ("4x4 to the end"), one
// row per ply 0 to 12: positions, terminal, edges, black wins, white wins,
// draws. testdata/reference/4x4.txt holds the same table, and this
// package's test keeps the two equal.
var Ref4x4 = [][6]int64{
	{1, 0, 0, 0, 1, 0}, {1, 0, 4, 0, 1, 0}, {3, 0, 3, 2, 1, 0}, {11, 0, 11, 5, 6, 0},
	{31, 0, 32, 19, 12, 0}, {98, 0, 105, 38, 58, 2}, {274, 1, 292, 149, 114, 11},
	{666, 1, 810, 267, 350, 49}, {1544, 3, 1753, 788, 657, 99}, {2665, 18, 3592, 1173, 1290, 202},
	{3464, 50, 5025, 1624, 1557, 283}, {2617, 167, 5059, 1113, 1209, 295}, {999, 999, 2450, 411, 441, 147},
}

// Ref8x8Positions and Ref8x8Edges are the 8x8 counts of docs/reference.md
// ("8x8 per ply") for plies 0 to 8, where no position is terminal, and
// Ref8x8Unreduced counts the same plies' positions without the symmetry
// reduction (OEIS A124005). They match testdata/reference/8x8.txt.
var (
	Ref8x8Positions = []int64{1, 1, 3, 14, 60, 322, 1773, 10649, 67245}
	Ref8x8Edges     = []int64{0, 4, 3, 14, 61, 340, 1893, 11906, 75557}
	Ref8x8Unreduced = []int64{1, 4, 12, 54, 236, 1288, 7092, 42614, 269352}
)

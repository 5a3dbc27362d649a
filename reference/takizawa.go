package reference

import (
	"fmt"

	"github.com/reversi-cloud/reversi/board"
)

// TakizawaCount returns the number of distinct positions with the given
// number of discs under the convention of Takizawa's "Othello is Solved"
// (2023): a position is its pair (mover's discs, opponent's discs), so the
// colours are forgotten; terminal positions are dropped; and pairs equal
// under a board symmetry count once. Passes are folded as everywhere else,
// so the mover is a side that can move.
func TakizawaCount(b *board.Board, discs int) (int64, error) {
	if b == nil {
		return 0, fmt.Errorf("reference: Takizawa count: nil board")
	}
	target := discs - 4
	if err := checkTarget(b, target); err != nil {
		return 0, fmt.Errorf("reference: Takizawa count for %d discs: %w", discs, err)
	}
	start := b.Canonical(b.Start())
	if target == 0 {
		return pairCount(b, []board.Position{start}, map[board.Position]struct{}{}), nil
	}
	// Canonical positions of the ply before are enough: symmetric parents
	// have symmetric children, which the pair's canonical form merges. The
	// last ply goes straight into the pair set instead of a position map of
	// its own, which on 8x8 at 14 discs would hold three million entries.
	cur := map[board.Position]board.Result{start: board.Unknown}
	for n := 0; n < target-1; n++ {
		cur, _ = expand(b, cur)
	}
	seen := make(map[board.Position]struct{}, len(cur)*8)
	buf := make([]board.Position, 0, 64)
	for p := range cur {
		buf, _ = b.Children(p, buf[:0])
		pairCount(b, buf, seen)
	}
	return int64(len(seen)), nil
}

// pairCount adds the non-terminal positions of ps to seen as (mover,
// opponent) pairs reduced by symmetry, and returns the size of seen. The
// pair is stored in a Position as (occupancy, mover discs) with a fixed
// side, so Canonical reduces it by the same rule as positions.
func pairCount(b *board.Board, ps []board.Position, seen map[board.Position]struct{}) int64 {
	for _, p := range ps {
		if b.Terminal(p) {
			continue
		}
		seen[b.Canonical(board.Position{Occ: p.Occ, White: p.Mover()})] = struct{}{}
	}
	return int64(len(seen))
}

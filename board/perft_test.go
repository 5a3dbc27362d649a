package board_test

import (
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
)

// TestPerftA124005 counts positions per ply without the symmetry reduction
// on 8x8 through ply 8 and compares with OEIS A124005 as transcribed in
// testkit (docs/reference.md, testdata/reference/8x8.txt); no pass or game
// end is possible that early, so the conventions agree. It is an external
// test because testkit imports board.
func TestPerftA124005(t *testing.T) {
	b := board.MustNew(8)
	ply := map[board.Position]bool{b.Start(): true}
	for n, want := range testkit.Ref8x8Unreduced {
		if int64(len(ply)) != want {
			t.Fatalf("ply %d: %d positions, want %d", n, len(ply), want)
		}
		if n < len(testkit.Ref8x8Unreduced)-1 {
			ply = testkit.PlayAll(t, b, ply)
		}
	}
}

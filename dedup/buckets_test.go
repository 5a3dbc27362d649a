package dedup

import (
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestChooseSplitters: the splitters of 8x8 ply 6, sampled from every
// position of ply 5, ascend strictly, cut the ply into about the buckets
// its size asks for, and into no more than the most it is given
// (runstore.Sizes.MostBuckets: wide buckets, or one).
func TestChooseSplitters(t *testing.T) {
	b, err := board.New(8)
	if err != nil {
		t.Fatal(err)
	}
	ply := testkit.Ply(b, 5)
	if len(ply) != 322 {
		t.Fatalf("ply 5 has %d positions, want 322", len(ply))
	}
	// 1,773 positions at ply 6 (1,893 edges), in blobs of 10 and
	// buckets of 4 blobs: about 47 buckets by the edges.
	for _, c := range []struct{ most, min, max int }{
		{runstore.MaxBuckets, 40, 50},
		{runstore.MinRanges, runstore.MinRanges, runstore.MinRanges},
		{1, 1, 1},
	} {
		s := ChooseSplitters(b, ply, int64(len(ply)), 10, 4, c.most)
		if n := len(s) + 1; n < c.min || n > c.max {
			t.Errorf("at most %d buckets: %d, want %d to %d", c.most, n, c.min, c.max)
		}
		for i := 1; i < len(s); i++ {
			if board.Compare(s[i-1], s[i]) >= 0 {
				t.Fatalf("at most %d buckets: splitter %d does not ascend", c.most, i)
			}
		}
	}
}

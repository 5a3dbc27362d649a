package dedup

import (
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

// TestLess checks the sort's and merge's comparisons against
// packed.CompareEdges, the order runs are stored in.
func TestLess(t *testing.T) {
	p := board.Position{Occ: 0x18, White: 0x08}
	tests := []struct {
		name string
		a, b Entry
		want int
	}{
		{"equal", Entry{Pos: p, Ref: Ref{Blob: 1, Index: 2}}, Entry{Pos: p, Ref: Ref{Blob: 1, Index: 2}}, 0},
		{"position first", Entry{Pos: p, Ref: Ref{Blob: 9, Index: 9}}, Entry{Pos: board.Position{Occ: 0x19}, Ref: Ref{Blob: 0, Index: 0}}, -1},
		{"side before occupancy", Entry{Pos: board.Position{Occ: 1, Side: board.White}}, Entry{Pos: board.Position{Occ: 2}}, 1},
		{"blob before index", Entry{Pos: p, Ref: Ref{Blob: 1, Index: 9}}, Entry{Pos: p, Ref: Ref{Blob: 2, Index: 0}}, -1},
		{"index", Entry{Pos: p, Ref: Ref{Blob: 1, Index: 3}}, Entry{Pos: p, Ref: Ref{Blob: 1, Index: 2}}, 1},
		{"unsigned", Entry{Pos: p, Ref: Ref{Blob: 1 << 31, Index: 0}}, Entry{Pos: p, Ref: Ref{Blob: 1, Index: 0}}, 1},
		{"square 0's colour", Entry{Pos: board.Position{Occ: 0x19, White: 0x09}}, Entry{Pos: board.Position{Occ: 0x19, White: 0x08}, Ref: Ref{Blob: 1}}, 1},
		{"top occupancy bit", Entry{Pos: board.Position{Occ: 1 << 63}}, Entry{Pos: board.Position{Occ: 1<<63 | 1}}, -1},
		{"full board", Entry{Pos: board.Position{Occ: ^uint64(0), White: ^uint64(0), Side: board.White}}, Entry{Pos: board.Position{Occ: ^uint64(0), White: ^uint64(0) - 1, Side: board.White}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := packed.CompareEdges(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareEdges = %d, want %d", got, tt.want)
			}
			if got := less(&tt.a, &tt.b); got != (tt.want < 0) {
				t.Errorf("less = %v, want %v", got, tt.want < 0)
			}
			if got := lessBits(keyOf(&tt.a), keyOf(&tt.b)) == 1; got != (tt.want < 0) {
				t.Errorf("lessBits = %v, want %v", got, tt.want < 0)
			}
			// Prefixes order as the keys do, or are equal.
			pa, pb := prefixOf(keyOf(&tt.a)), prefixOf(keyOf(&tt.b))
			switch {
			case lessPrefix(pa, pb) == ^uint64(0) && tt.want >= 0, lessPrefix(pb, pa) == ^uint64(0) && tt.want <= 0:
				t.Errorf("prefixes %x and %x order against the entries (%d)", pa, pb, tt.want)
			case pa == pb && tt.a.Pos != tt.b.Pos && tt.a.Pos.White^tt.b.Pos.White != 1:
				t.Errorf("equal prefixes %x for positions that differ past square 0", pa)
			}
		})
	}
}

package expand

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
)

// TestGenerateBuckets: edges generated into the first pass's buckets and
// sorted there equal the edges generated in a row, sorted and split by
// side, on plies with either side to move, with one processor and more,
// with an estimate of the edges far too short (the chunks' memory then
// grows), and with a plan drawn up from other positions (most edges then
// fall outside its range).
func TestGenerateBuckets(t *testing.T) {
	tests := []struct {
		size, ply int
		estimate  func(moves int) int
		planFrom  int // the ply the plan is drawn up from, if not the same
	}{
		{size: 4, ply: 5},
		{size: 6, ply: 6},
		{size: 6, ply: 8},
		{size: 8, ply: 6},
		{size: 8, ply: 7},
		{size: 6, ply: 8, estimate: func(int) int { return 1 }},
		{size: 8, ply: 7, planFrom: 3},
		{size: 8, ply: 7, planFrom: 9},
	}
	for _, tt := range tests {
		b := board.MustNew(tt.size)
		positions := testkit.Ply(b, tt.ply)
		l, _ := edgeLayout(positions, allParents)
		want, wantSt, g := l.generate(b, positions, nil)
		t.Logf("%dx%d ply %d: %d edges, %d with white to move", tt.size, tt.size, tt.ply, len(want), g.whites)
		sortEdges(want, make([]edge, len(want)), &g.occ)
		splitSides(want, make([]edge, len(want)), g.whites)
		for _, procs := range []int{1, 2} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				moves := movesAbout(b, positions)
				if tt.estimate != nil {
					moves = tt.estimate(moves)
				}
				var k bucketed
				st := l.generateBuckets(b, positions, moves, &k, nil)
				if tt.planFrom != 0 {
					// Again, the plan from other positions.
					k.plan.plan(b, testkit.Ply(b, tt.planFrom), nil)
					k.reset(k.es, moves)
					st = l.fillBuckets(b, positions, &k)
				}
				if tt.estimate != nil && len(k.es) <= sideBuckets*chunkEdges {
					t.Fatalf("%dx%d ply %d: the chunks' memory did not grow", tt.size, tt.size, tt.ply)
				}
				if k.len() != len(want) {
					t.Fatalf("%dx%d ply %d: %d edges in the buckets, want %d", tt.size, tt.size, tt.ply, k.len(), len(want))
				}
				got := k.sort(make([]edge, k.len()))
				if st.Edges != wantSt.Edges || st.Terminal != wantSt.Terminal {
					t.Fatalf("%dx%d ply %d: %+v, want %+v", tt.size, tt.size, tt.ply, st, wantSt)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%dx%d ply %d, GOMAXPROCS %d, %+v: the bucketed edges differ from the sorted ones", tt.size, tt.size, tt.ply, procs, tt)
				}
			}()
		}
	}
}

// TestFirstPassMonotone: an occupancy's bucket never decreases as the
// occupancy grows, within the plan's range and outside it, and the plan
// drawn from a sample spreads the children over the buckets about as
// the pass over them all does.
func TestFirstPassMonotone(t *testing.T) {
	b := board.MustNew(8)
	positions := testkit.Ply(b, 7)
	var f firstPass
	f.plan(b, positions, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	occs := []uint64{0, 1, f.lo - 1, f.lo, f.lo + 1, ^uint64(0), ^uint64(0) - 1}
	for range 100000 {
		occs = append(occs, rng.Uint64(), f.lo+rng.Uint64()>>(64-wideBits-f.shift-1))
	}
	slices.Sort(occs)
	last := 0
	for _, o := range occs {
		bk := f.bucket(o)
		if bk < last || bk > 255 {
			t.Fatalf("bucket(%#x) = %d after %d", o, bk, last)
		}
		last = bk
	}
	// The buckets of the children, against those of the pass it stands
	// for, which sees them all.
	l, _ := edgeLayout(positions, allParents)
	es, _, g := l.generate(b, positions, nil)
	var counts [256]int
	for _, e := range es {
		counts[f.bucket(e.Occ)]++
	}
	var s edgeSorter
	wide := s.scatterWideAt(es, make([]edge, len(es)), 0, 0, uint(max(bits.Len64(g.occ.differ())-wideBits, 0)))
	largest := func(counts []int) (n int) {
		for _, c := range counts {
			n = max(n, c)
		}
		return n
	}
	if got, want := largest(counts[:]), largest(wide); got > 2*want {
		t.Errorf("the plan's largest bucket holds %d of %d children, the pass's %d", got, len(es), want)
	}
}

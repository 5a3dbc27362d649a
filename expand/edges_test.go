package expand

import (
	"bytes"
	"cmp"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestEdgesAsEntries: a task's edges packed through 16-byte edges give
// the same bytes, cuts and counts as through 32-byte entries sorted by
// dedup.SortEntries, on plies whose children have either side to move
// (4x4 and 6x6 pass early), with splitters inside and around the edges.
func TestEdgesAsEntries(t *testing.T) {
	tests := []struct {
		size, ply int
		whites    bool // some children, not all, have the other side to move
	}{
		{4, 3, true},
		{4, 5, true},
		{4, 7, true},
		{6, 6, false}, // all white to move: the side bit set in every edge
		{8, 5, false},
		{8, 7, true},
	}
	for _, tt := range tests {
		b := board.MustNew(tt.size)
		positions := testkit.Ply(b, tt.ply)
		l, ok := edgeLayout(positions, allParents)
		if !ok {
			t.Fatalf("%dx%d ply %d: children do not fit in 16-byte edges", tt.size, tt.size, tt.ply)
		}
		es, _, g := l.generate(b, positions, nil)
		if got := g.whites > 0 && g.whites < len(es); got != tt.whites {
			t.Fatalf("%dx%d ply %d: %d of %d children have white to move, want mixed sides %v", tt.size, tt.size, tt.ply, g.whites, len(es), tt.whites)
		}
		kids := testkit.Ply(b, tt.ply+1)
		slices.SortFunc(kids, board.Compare)
		splitters := [][]board.Position{
			nil,
			{kids[len(kids)/3], kids[2*len(kids)/3]},
			{{Side: board.White, Occ: ^uint64(0), White: ^uint64(0)}},
		}
		for _, s := range splitters {
			gotData, gotCuts, gotSt, err := new(buffer).runEdges(l, b, positions, 5, s)
			if err != nil {
				t.Fatal(err)
			}
			wantData, wantCuts, wantSt, err := new(buffer).runEntries(b, positions, 5, allParents, s)
			if err != nil {
				t.Fatal(err)
			}
			if gotSt != wantSt || !slices.Equal(gotCuts, wantCuts) || !bytes.Equal(gotData, wantData) {
				t.Fatalf("%dx%d ply %d, %d splitters: edges give %+v, cuts %v, %d bytes; entries %+v, cuts %v, %d bytes",
					tt.size, tt.size, tt.ply, len(s), gotSt, gotCuts, len(gotData), wantSt, wantCuts, len(wantData))
			}
		}
	}
}

// TestEdgeLayout: the parent's index takes the bits of the largest
// index, and children that leave no room for a side bit, a white bit a
// disc and those bits are refused.
func TestEdgeLayout(t *testing.T) {
	withDiscs := func(discs, n int) []board.Position {
		return slices.Repeat([]board.Position{{Occ: 1<<discs - 1}}, n)
	}
	tests := []struct {
		name      string
		positions []board.Position
		indexBits uint
		ok        bool
	}{
		{"none", nil, 0, true},
		{"one", withDiscs(10, 1), 0, true},
		{"two", withDiscs(10, 2), 1, true},
		{"1024", withDiscs(10, 1024), 10, true},
		{"1025", withDiscs(10, 1025), 11, true},
		{"exactly 64 bits", withDiscs(52, 1024), 10, true}, // 1 + 53 + 10
		{"one bit too many", withDiscs(53, 1024), 10, false},
		{"a full 8x8 board's parents", withDiscs(63, 2), 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := edgeLayout(tt.positions, allParents)
			if ok != tt.ok || ok && l.indexBits != tt.indexBits {
				t.Fatalf("edgeLayout = %+v, %v; want %d index bits, %v", l, ok, tt.indexBits, tt.ok)
			}
		})
	}
}

// TestRunFallsBack: a task whose children do not fit in 16-byte edges
// (parents of 60 discs from a blob of 64 positions) is packed as
// entries, to the bytes runEntries gives.
func TestRunFallsBack(t *testing.T) {
	b := board.MustNew(8)
	rng := rand.New(rand.NewPCG(1, 2))
	var positions []board.Position
	for len(positions) < 64 {
		p := randomGame(b, rng, 60)
		if _, ok := edgeLayout([]board.Position{p}, allParents); ok && b.Moves(p) != 0 {
			positions = append(positions, p)
		}
	}
	if _, ok := edgeLayout(positions, allParents); ok {
		t.Fatal("64 positions of 60 discs fit in 16-byte edges")
	}
	got, _, gotSt, err := new(buffer).run(b, positions, 1, allParents, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, wantSt, err := new(buffer).runEntries(b, positions, 1, allParents, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gotSt != wantSt || gotSt.Edges == 0 || !bytes.Equal(got, want) {
		t.Fatalf("run: %+v, %d bytes; runEntries: %+v, %d bytes", gotSt, len(got), wantSt, len(want))
	}
}

// randomGame plays random moves from the start until the position has
// discs discs or the game ends.
func randomGame(b *board.Board, rng *rand.Rand, discs int) board.Position {
	p := b.Start()
	var kids []board.Position
	for bits.OnesCount64(p.Occ) < discs {
		if kids, _ = b.Children(p, kids[:0]); len(kids) == 0 {
			break
		}
		p = kids[rng.IntN(len(kids))]
	}
	return p
}

// TestSortEdges: sortEdges orders edges as 128-bit numbers, on random,
// skewed, equal, sorted and reversed input, even and odd in number, real children, and inputs
// large enough for the goroutines, with one processor and more.
func TestSortEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int, hiMask, loMask uint64) []edge {
		es := make([]edge, n)
		for i := range es {
			es[i] = edge{Occ: rng.Uint64() & hiMask, Low: rng.Uint64() & loMask}
		}
		return es
	}
	sorted := func(es []edge) []edge {
		slices.SortFunc(es, compareEdges)
		return es
	}
	b := board.MustNew(8)
	positions := testkit.Ply(b, 6)
	l, _ := edgeLayout(positions, allParents)
	real, _, g := l.generate(b, positions, nil)
	if g.occ != spanOf(real) {
		t.Fatalf("generate's span of the occupancies is %x, want %x", g.occ, spanOf(real))
	}
	tests := []struct {
		name string
		in   []edge
	}{
		{"empty", nil},
		{"one", random(1, ^uint64(0), ^uint64(0))},
		{"small", random(15, ^uint64(0), ^uint64(0))},
		{"one pass", random(smallEdges+1, ^uint64(0), ^uint64(0))},
		{"random", random(5000, ^uint64(0), ^uint64(0))},
		{"equal hi", random(5000, 0, ^uint64(0))},
		{"few bits", random(5000, 0x8000000000000101, 0x8000000000000003)},
		{"all equal", slices.Repeat([]edge{{Occ: 7, Low: 9}}, 3000)},
		{"sorted", sorted(random(3000, ^uint64(0), ^uint64(0)))},
		{"reversed", func() []edge {
			es := sorted(random(3000, ^uint64(0), ^uint64(0)))
			slices.Reverse(es)
			return es
		}()},
		{"real children", real},
		{"large random", random(3*parallelEdges, ^uint64(0), ^uint64(0))},
		{"large skewed", random(3*parallelEdges, 0x00ff000000000001, 0xff)},
		{"large, one value common", func() []edge {
			es := random(3*wideEdges, 0x0000ffff00000000, ^uint64(0))
			for i := range es {
				if i%10 != 0 {
					es[i].Occ = 0x0000123400000000
				}
			}
			return es
		}()},
		{"large, few digit values", random(2*wideEdges, 0x0003000000ffffff, ^uint64(0))},
		{"large, equal hi", random(2*wideEdges, 0, ^uint64(0))},
		// An odd number of edges leaves one out of the scatters' halves.
		{"large, odd", random(2*wideEdges+1, 0x00ff00ff00000000, ^uint64(0))},
		{"odd, one digit value common", func() []edge {
			es := random(4001, 0xff, ^uint64(0))
			for i := range es {
				if i%7 != 0 {
					es[i].Occ = 0x42
				}
			}
			return es
		}()},
	}
	for _, procs := range []int{1, 2} {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				want := sorted(slices.Clone(tt.in))
				got := slices.Clone(tt.in)
				sortEdges(got, make([]edge, len(got)+3), nil)
				if !slices.Equal(got, want) {
					t.Fatalf("GOMAXPROCS %d: sortEdges differs from slices.SortFunc", procs)
				}
				// With the span of the occupancies given, as generate gives it.
				span := spanOf(tt.in)
				got = slices.Clone(tt.in)
				sortEdges(got, make([]edge, len(got)), &span)
				if !slices.Equal(got, want) {
					t.Fatalf("GOMAXPROCS %d: sortEdges with the span differs from slices.SortFunc", procs)
				}
			})
		}
	}
}

// spanOf returns the span of the occupancies of es.
func spanOf(es []edge) occSpan {
	s := emptySpan
	for _, e := range es {
		s.and &= e.Occ
		s.or |= e.Occ
	}
	return s
}

func compareEdges(a, b edge) int {
	if c := cmp.Compare(a.Occ, b.Occ); c != 0 {
		return c
	}
	return cmp.Compare(a.Low, b.Low)
}

// Child ply records as expansions read them: a ply that keeps every
// position's parents, and target plies that keep the terminal ones'
// only, with refs that tell terminal positions and as begun before.
var (
	allParents   = &runstore.Ply{}
	terminalOnly = &runstore.Ply{TerminalSources: true, RefsMarkTerminal: true}
	testedBefore = &runstore.Ply{TerminalSources: true}
)

// TestTerminalOnly: for a ply with TerminalSources, a task's run holds
// each distinct child that is not terminal once, naming no parent
// (dedup.Ref{}), and each terminal child once for each parent, named as
// the record says (runstore.Ply.RunRef: the index plus one, or as it is
// in a ply begun before refs told terminal positions); the merges read
// back which children are terminal (TerminalByRefs) and their parents
// (ParentOf); the 16-byte edges and the entries give the same bytes and
// cuts, and Entries counts the edges written.
func TestTerminalOnly(t *testing.T) {
	tests := []struct{ size, ply int }{{4, 5}, {4, 7}, {4, 9}, {6, 7}, {8, 4}}
	var terminal, dropped int
	for _, rule := range []*runstore.Ply{terminalOnly, testedBefore} {
		for _, tt := range tests {
			b := board.MustNew(tt.size)
			positions := testkit.Ply(b, tt.ply)
			kids := testkit.Ply(b, tt.ply+1)
			slices.SortFunc(kids, board.Compare)
			splitters := []board.Position{kids[len(kids)/3], kids[2*len(kids)/3]}
			all, _, allSt, err := new(buffer).run(b, positions, 5, allParents, splitters)
			if err != nil {
				t.Fatal(err)
			}
			var want []packed.Edge
			parents := map[board.Position][]packed.Ref{}
			for _, e := range decodeEdges(t, all) {
				end := b.Terminal(e.Pos)
				if end {
					terminal++
					parents[e.Pos] = append(parents[e.Pos], e.Ref)
				}
				e.Ref = rule.RunRef(e.Ref, end)
				if n := len(want); n > 0 && want[n-1] == e {
					dropped++
					continue
				}
				want = append(want, e)
			}
			l, ok := edgeLayout(positions, rule)
			if !ok {
				t.Fatalf("%dx%d ply %d: children do not fit in 16-byte edges", tt.size, tt.size, tt.ply)
			}
			data, cuts, st, err := new(buffer).runEdges(l, b, positions, 5, splitters)
			if err != nil {
				t.Fatal(err)
			}
			got := decodeEdges(t, data)
			if !slices.Equal(got, want) {
				t.Fatalf("%dx%d ply %d: %d edges, want %d", tt.size, tt.size, tt.ply, len(got), len(want))
			}
			for i := 0; i < len(got); {
				j := i + 1
				for j < len(got) && got[j].Pos == got[i].Pos {
					j++
				}
				refs := make([]packed.Ref, 0, j-i)
				for _, e := range got[i:j] {
					refs = append(refs, e.Ref)
				}
				end, known := rule.TerminalByRefs(refs)
				if known != (rule == terminalOnly) || known && end != b.Terminal(got[i].Pos) {
					t.Fatalf("%dx%d ply %d: %v with refs %v: TerminalByRefs says %v, %v", tt.size, tt.size, tt.ply, got[i].Pos, refs, end, known)
				}
				if b.Terminal(got[i].Pos) {
					for k, r := range refs {
						refs[k] = rule.ParentOf(r)
					}
					if !slices.Equal(refs, parents[got[i].Pos]) {
						t.Fatalf("%dx%d ply %d: terminal %v has parents %v, want %v", tt.size, tt.size, tt.ply, got[i].Pos, refs, parents[got[i].Pos])
					}
				}
				i = j
			}
			wantSt := allSt
			wantSt.Entries = int64(len(want))
			if st != wantSt {
				t.Errorf("%dx%d ply %d: %+v, want %+v", tt.size, tt.size, tt.ply, st, wantSt)
			}
			eData, eCuts, eSt, err := new(buffer).runEntries(b, positions, 5, rule, splitters)
			if err != nil {
				t.Fatal(err)
			}
			if eSt != st || !slices.Equal(eCuts, cuts) || !bytes.Equal(eData, data) {
				t.Fatalf("%dx%d ply %d: entries give %+v, cuts %v, %d bytes; edges %+v, cuts %v, %d bytes",
					tt.size, tt.size, tt.ply, eSt, eCuts, len(eData), st, cuts, len(data))
			}
		}
	}
	if terminal == 0 || dropped == 0 {
		t.Fatalf("%d edges to terminal children, %d dropped: the cases test neither", terminal, dropped)
	}
}

// decodeEdges returns the edges of a packed run.
func decodeEdges(t *testing.T, data []byte) []packed.Edge {
	t.Helper()
	r := packed.NewEdgeReader(bytes.NewReader(data))
	var es []packed.Edge
	for {
		e, ok := r.Next()
		if !ok {
			break
		}
		es = append(es, e)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return es
}

// TestSplitSides: the edges with white to move end after the others,
// each side in its order, whichever side has fewer, with scratch space
// only as long as the fewer side's edges.
func TestSplitSides(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 7, 100} {
		for _, whites := range []int{0, 1, n / 3, n / 2, n - n/3, n - 1, n} {
			if whites < 0 || whites > n {
				continue
			}
			es := make([]edge, n)
			for i := range es {
				es[i] = edge{Occ: uint64(i), Low: rng.Uint64N(1 << 20)}
			}
			for _, i := range rng.Perm(n)[:whites] {
				es[i].Low |= 1 << 63
			}
			want := slices.Clone(es)
			slices.SortStableFunc(want, func(a, b edge) int { return cmp.Compare(a.Low>>63, b.Low>>63) })
			tmp := make([]edge, min(whites, n-whites))
			if splitSides(es, tmp, whites); !slices.Equal(es, want) {
				t.Fatalf("%d edges, %d with white to move: got %v, want %v", n, whites, es, want)
			}
		}
	}
}

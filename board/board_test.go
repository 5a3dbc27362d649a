package board

import (
	"errors"
	"math/bits"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

var sizes = []int{4, 6, 8}

// randomGame plays uniformly random legal moves from the start until the
// game ends, calling visit on every position before its move.
func randomGame(b *Board, rng *rand.Rand, visit func(p Position)) Position {
	return b.playRandom(rng, visit)
}

// randomPosition scatters discs over the board with no regard for
// reachability, to exercise lines the start rarely produces.
func randomPosition(b *Board, rng *rand.Rand) Position {
	density := rng.Float64()
	var p Position
	for sq := 0; sq < 64; sq++ {
		if b.Mask()>>sq&1 == 0 || rng.Float64() > density {
			continue
		}
		p.Occ |= 1 << sq
		if rng.Intn(2) == 0 {
			p.White |= 1 << sq
		}
	}
	p.Side = Color(rng.Intn(2))
	return p
}

// checkAgainstSimple compares Moves, Flips and Play with the array
// implementation on every square of the 8x8 frame.
func checkAgainstSimple(t *testing.T, b *Board, p Position) {
	t.Helper()
	s := toSimple(b.Size(), p)
	if got := s.position(); got != p {
		t.Fatalf("simple round trip of %v gave %v", p, got)
	}
	var want uint64
	for sq := 0; sq < 64; sq++ {
		var wantFlips uint64
		if b.Mask()>>sq&1 == 1 {
			for _, j := range s.flips(simpleIndex(sq), s.side) {
				wantFlips |= 1 << uint((j/10-1)*8+j%10-1)
			}
		}
		if got := b.Flips(p, sq); got != wantFlips {
			t.Fatalf("%dx%d %v: Flips(%s) = %#x, simple says %#x\n%s", b.Size(), b.Size(), p, b.SquareName(sq), got, wantFlips, b.Diagram(p))
		}
		q, err := b.Play(p, sq)
		if wantFlips == 0 {
			if err == nil || !errors.Is(err, ErrIllegal) {
				t.Fatalf("%v: Play(%s) = %v, %v; want ErrIllegal", p, b.SquareName(sq), q, err)
			}
			continue
		}
		want |= 1 << sq
		s2 := s
		s2.play(simpleIndex(sq))
		if err != nil || q != s2.position() {
			t.Fatalf("%v: Play(%s) = %v, %v; simple says %v\n%s", p, b.SquareName(sq), q, err, s2.position(), b.Diagram(p))
		}
	}
	if got := b.Moves(p); got != want {
		t.Fatalf("%v: Moves = %#x, simple says %#x\n%s", p, got, want, b.Diagram(p))
	}
	if got := b.canMove(p.Mover(), p.Opponent(), p.Occ); got != (want != 0) {
		t.Fatalf("%v: canMove = %v, simple's moves are %#x\n%s", p, got, want, b.Diagram(p))
	}
	wantTerminal := !s.hasMove(sBlack) && !s.hasMove(sWhite)
	if got := b.Terminal(p); got != wantTerminal {
		t.Fatalf("%v: Terminal = %v, simple says %v", p, got, wantTerminal)
	}
}

func TestRulesAgainstSimple(t *testing.T) {
	tests := []struct {
		size, games, scattered int
	}{
		{4, 2000, 2000},
		{6, 1000, 2000},
		{8, 500, 2000},
	}
	for _, tc := range tests {
		b := MustNew(tc.size)
		rng := rand.New(rand.NewSource(int64(tc.size)))
		for g := 0; g < tc.games; g++ {
			end := randomGame(b, rng, func(p Position) { checkAgainstSimple(t, b, p) })
			if !b.Terminal(end) {
				t.Fatalf("%dx%d: game ended in non-terminal %v", tc.size, tc.size, end)
			}
		}
		for i := 0; i < tc.scattered; i++ {
			checkAgainstSimple(t, b, randomPosition(b, rng))
		}
	}
}

func TestStart(t *testing.T) {
	tests := []struct {
		size  int
		white []string
		black []string
		moves []string
	}{
		{4, []string{"b2", "c3"}, []string{"c2", "b3"}, []string{"b1", "a2", "d3", "c4"}},
		{6, []string{"c3", "d4"}, []string{"d3", "c4"}, []string{"c2", "b3", "e4", "d5"}},
		{8, []string{"d4", "e5"}, []string{"e4", "d5"}, []string{"d3", "c4", "f5", "e6"}},
	}
	for _, tc := range tests {
		b := MustNew(tc.size)
		mask := func(names []string) uint64 {
			var m uint64
			for _, n := range names {
				sq, err := b.ParseSquare(n)
				if err != nil {
					t.Fatal(err)
				}
				m |= 1 << sq
			}
			return m
		}
		want := Position{Occ: mask(tc.white) | mask(tc.black), White: mask(tc.white), Side: Black}
		if got := b.Start(); got != want {
			t.Errorf("%dx%d: Start = %v, want %v", tc.size, tc.size, got, want)
		}
		if got := b.Moves(b.Start()); got != mask(tc.moves) {
			t.Errorf("%dx%d: start moves %#x, want %v", tc.size, tc.size, got, tc.moves)
		}
		if b.Ply(b.Start()) != 0 {
			t.Errorf("%dx%d: start ply %d", tc.size, tc.size, b.Ply(b.Start()))
		}
	}
}

func TestNewRejectsSizes(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 2, 3, 5, 7, 9, 10, 16} {
		if _, err := New(n); !errors.Is(err, ErrSize) {
			t.Errorf("New(%d) error = %v, want ErrSize", n, err)
		}
	}
	for _, n := range sizes {
		b, err := New(n)
		if err != nil || b.Size() != n || bits.OnesCount64(b.Mask()) != n*n {
			t.Errorf("New(%d) = size %d, %d squares, %v", n, b.Size(), bits.OnesCount64(b.Mask()), err)
		}
	}
}

func TestPassFolded(t *testing.T) {
	// Folded passes must turn up in random games on every size, or the
	// agreement test above would not cover them.
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(99))
		folded := 0
		for g := 0; g < 300; g++ {
			var prev *Position
			randomGame(b, rng, func(p Position) {
				if prev != nil && prev.Side == p.Side {
					folded++
					if b.Moves(Position{Occ: p.Occ, White: p.White, Side: p.Side.Opponent()}) != 0 {
						t.Fatalf("%v: pass folded although the opponent can move", p)
					}
				}
				q := p
				prev = &q
			})
		}
		if folded == 0 {
			t.Errorf("%dx%d: no folded pass in 300 random games", n, n)
		}
	}
}

func TestResult(t *testing.T) {
	b := MustNew(4)
	tests := []struct {
		name string
		p    Position
		want Result
	}{
		{"start", b.Start(), Draw},
		{"one black", Position{Occ: 1}, BlackWins},
		{"one white", Position{Occ: 1, White: 1}, WhiteWins},
		{"empty", Position{}, Draw},
		{"3-2 white", Position{Occ: 0b11111, White: 0b11000}, BlackWins},
		{"2-3 white", Position{Occ: 0b11111, White: 0b11100}, WhiteWins},
	}
	for _, tc := range tests {
		if got := b.Result(tc.p); got != tc.want {
			t.Errorf("%s: Result = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestColorAndResultStrings(t *testing.T) {
	tests := []struct {
		r    Result
		text string
	}{
		{Unknown, "unknown"}, {BlackWins, "black"}, {WhiteWins, "white"}, {Draw, "draw"},
	}
	for _, tc := range tests {
		if tc.r.String() != tc.text {
			t.Errorf("%d.String() = %q, want %q", tc.r, tc.r.String(), tc.text)
		}
		got, err := ParseResult(tc.text)
		if err != nil || got != tc.r {
			t.Errorf("ParseResult(%q) = %v, %v", tc.text, got, err)
		}
	}
	for _, bad := range []string{"", "Black", "win", "unknown "} {
		if _, err := ParseResult(bad); err == nil {
			t.Errorf("ParseResult(%q) succeeded", bad)
		}
	}
	if Black.String() != "black" || White.String() != "white" || Black.Opponent() != White || White.Opponent() != Black {
		t.Error("Color basics broken")
	}
	if WinFor(Black) != BlackWins || WinFor(White) != WhiteWins {
		t.Error("WinFor broken")
	}
	if !strings.Contains(Color(7).String(), "7") || !strings.Contains(Result(9).String(), "9") {
		t.Error("out-of-range values should print their number")
	}
}

func TestValid(t *testing.T) {
	b4, b8 := MustNew(4), MustNew(8)
	tests := []struct {
		name string
		b    *Board
		p    Position
		ok   bool
	}{
		{"start 4", b4, b4.Start(), true},
		{"start 8", b8, b8.Start(), true},
		{"8x8 start on 4x4", b4, b8.Start(), false},
		{"column e on 4x4", b4, Position{Occ: 1 << 4}, false},
		{"row 5 on 4x4", b4, Position{Occ: 1 << 32}, false},
		{"white without occupancy", b8, Position{Occ: 1, White: 2}, false},
		{"bad side", b8, Position{Side: 2}, false},
		{"full 8x8", b8, Position{Occ: ^uint64(0), White: 0xf0f0}, true},
	}
	for _, tc := range tests {
		if err := tc.b.Valid(tc.p); (err == nil) != tc.ok {
			t.Errorf("%s: Valid = %v, want ok=%v", tc.name, err, tc.ok)
		} else if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v does not wrap ErrInvalid", tc.name, err)
		}
	}
}

func TestChildren(t *testing.T) {
	terminals := 0
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(7))
		for g := 0; g < 100; g++ {
			randomGame(b, rng, func(p Position) {
				got, moves := b.Children(p, nil)
				want := map[Position]bool{}
				m := b.Moves(p)
				for mm := m; mm != 0; mm &= mm - 1 {
					q, err := b.Play(p, bits.TrailingZeros64(mm))
					if err != nil {
						t.Fatal(err)
					}
					want[b.Canonical(q)] = true
				}
				if moves != bits.OnesCount64(m) || len(got) != len(want) {
					t.Fatalf("%v: Children = %d positions, %d moves; want %d, %d", p, len(got), moves, len(want), bits.OnesCount64(m))
				}
				for _, c := range got {
					if !want[c] {
						t.Fatalf("%v: unexpected child %v", p, c)
					}
				}
				// ChildrenTerminal: the same children, appended after
				// what dst holds, each bit the terminal test of its own.
				kids, tmoves, terminal := b.ChildrenTerminal(p, []Position{p})
				if tmoves != moves || !slices.Equal(kids[1:], got) {
					t.Fatalf("%v: ChildrenTerminal = %v, %d moves; Children %v, %d", p, kids[1:], tmoves, got, moves)
				}
				for i, c := range got {
					if end := terminal>>i&1 == 1; end != b.Terminal(c) {
						t.Fatalf("%v: ChildrenTerminal says child %d (%v) terminal %v; Terminal %v", p, i, c, end, !end)
					}
					if b.Terminal(c) {
						terminals++
					}
				}
				if terminal>>len(got) != 0 {
					t.Fatalf("%v: ChildrenTerminal sets bits past its %d children: %#x", p, len(got), terminal)
				}
			})
		}
	}
	if terminals == 0 {
		t.Fatal("no random game reached a terminal child: the terminal bits went untested")
	}
}

func TestChildrenAppendsWithoutAllocating(t *testing.T) {
	b := MustNew(8)
	p, err := b.ParseMoves("f5d6c3d3c4f4f6f3e6e7")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]Position, 1, 64)
	allocs := testing.AllocsPerRun(100, func() { buf, _ = b.Children(p, buf[:1]) })
	if allocs != 0 {
		t.Errorf("Children allocates %.1f times per call", allocs)
	}
	if buf[0] != (Position{}) || len(buf) < 2 {
		t.Errorf("Children must append after existing elements, got %v", buf)
	}
}

// TestMidgame: the sample has the positions asked for, each a third to
// two thirds of the way into a game and not over, and is the same on
// every call, on every board size.
func TestMidgame(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		ps := b.Midgame(100)
		empty := n*n - 4
		for _, p := range ps {
			if ply := b.Ply(p); ply < empty/3 || ply > 2*empty/3 || b.Terminal(p) {
				t.Fatalf("%dx%d: %v at ply %d (terminal %v) in the sample", n, n, p, ply, b.Terminal(p))
			}
		}
		if len(ps) != 100 || !slices.Equal(ps, b.Midgame(100)) {
			t.Errorf("%dx%d: %d positions, or another sample the second time", n, n, len(ps))
		}
	}
}

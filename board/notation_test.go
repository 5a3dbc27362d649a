package board

import (
	"math/bits"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestSquareNames(t *testing.T) {
	tests := []struct {
		size int
		name string
		sq   int
		ok   bool
	}{
		{8, "a1", 0, true},
		{8, "h1", 7, true},
		{8, "a8", 56, true},
		{8, "H8", 63, true},
		{8, "d4", 27, true},
		{6, "f6", 45, true},
		{6, "g1", 0, false},
		{6, "a7", 0, false},
		{4, "d4", 27, true},
		{4, "e1", 0, false},
		{8, "i1", 0, false},
		{8, "a9", 0, false},
		{8, "a0", 0, false},
		{8, "1a", 0, false},
		{8, "a", 0, false},
		{8, "a10", 0, false},
		{8, "", 0, false},
		{8, "`1", 0, false},
		{8, "@1", 0, false},
	}
	for _, tc := range tests {
		b := MustNew(tc.size)
		sq, err := b.ParseSquare(tc.name)
		if (err == nil) != tc.ok || tc.ok && sq != tc.sq {
			t.Errorf("%dx%d: ParseSquare(%q) = %d, %v; want %d ok=%v", tc.size, tc.size, tc.name, sq, err, tc.sq, tc.ok)
		}
		if tc.ok && b.SquareName(sq) != strings.ToLower(tc.name) {
			t.Errorf("SquareName(%d) = %q, want %q", sq, b.SquareName(sq), strings.ToLower(tc.name))
		}
	}
	if b := MustNew(4); b.SquareName(4) != "sq4" || b.SquareName(-1) != "sq-1" {
		t.Errorf("off-board square names: %q %q", b.SquareName(4), b.SquareName(-1))
	}
}

func TestParseMoves(t *testing.T) {
	b := MustNew(8)
	tests := []struct {
		in      string
		discs   int
		side    Color
		wantErr string
	}{
		{"", 4, Black, ""},
		{"f5", 5, White, ""},
		{"f5d6c3d3c4", 9, White, ""},
		{"F5D6C3D3C4", 9, White, ""},
		{" f5, d6 ,c3  d3,c4 ", 9, White, ""},
		{"f5f5", 0, 0, "move 2: f5 for white: square occupied"},
		{"a1", 0, 0, "move 1: a1 for black: flips nothing"},
		{"f5z9", 0, 0, "move 2: board: square \"z9\""},
		{"f5pa", 0, 0, "move 2: pass, but white has a legal move"},
		{"pa", 0, 0, "move 1: pass, but black has a legal move"},
		{"f5d", 0, 0, "move 2: \"d\" is cut short"},
		{"f5;d6", 0, 0, "move 2"},
	}
	for _, tc := range tests {
		p, err := b.ParseMoves(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseMoves(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || p.Discs() != tc.discs || p.Side != tc.side {
			t.Errorf("ParseMoves(%q) = %v (%d discs), %v; want %d discs, %v to move", tc.in, p, p.Discs(), err, tc.discs, tc.side)
		}
	}
	// f5 flips e5: black then owns d5, e4, e5, f5 and white only d4.
	want := Position{Occ: b.Start().Occ | 1<<37, White: 1 << 27, Side: White}
	if p, _ := b.ParseMoves("f5"); p != want {
		t.Errorf("after f5: %v, want %v", p, want)
	}
	// An error comes with the position before the offending move.
	if p, err := b.ParseMoves("f5 f5"); err == nil || p != want {
		t.Errorf("ParseMoves(\"f5 f5\") = %v, %v; want %v and an error", p, err, want)
	}
}

// TestParseMovesPasses replays random games written with and without "pa"
// for every folded pass; both spellings must reach the same position, and a
// pass anywhere else must be refused.
func TestParseMovesPasses(t *testing.T) {
	for _, n := range sizes {
		b := MustNew(n)
		rng := rand.New(rand.NewSource(5))
		withPasses := 0
		for g := 0; g < 300; g++ {
			var plain, passes []string
			p := b.Start()
			for {
				m := b.Moves(p)
				if m == 0 {
					break
				}
				for k := rng.Intn(bits.OnesCount64(m)); k > 0; k-- {
					m &= m - 1
				}
				sq := bits.TrailingZeros64(m)
				q, err := b.Play(p, sq)
				if err != nil {
					t.Fatal(err)
				}
				plain = append(plain, b.SquareName(sq))
				passes = append(passes, b.SquareName(sq))
				if q.Side == p.Side && !b.Terminal(q) {
					passes = append(passes, "pa")
				}
				p = q
			}
			for _, text := range []string{strings.Join(plain, ""), strings.Join(passes, ","), strings.ToUpper(strings.Join(passes, " "))} {
				got, err := b.ParseMoves(text)
				if err != nil || got != p {
					t.Fatalf("%dx%d: ParseMoves(%q) = %v, %v; want %v", n, n, text, got, err, p)
				}
			}
			if len(passes) > len(plain) {
				withPasses++
			}
			// A pass after the first move is always wrong: the opponent of
			// the first mover has a reply on every size.
			bad := append([]string{plain[0], "pa"}, plain[1:]...)
			if _, err := b.ParseMoves(strings.Join(bad, "")); err == nil || !strings.Contains(err.Error(), "move 2: pass") {
				t.Fatalf("%dx%d: misplaced pass accepted or misreported: %v", n, n, err)
			}
			if _, err := b.ParseMoves(strings.Join(plain, "") + "pa"); err == nil || !strings.Contains(err.Error(), "game is over") {
				t.Fatalf("%dx%d: pass after the end accepted or misreported: %v", n, n, err)
			}
		}
		if withPasses == 0 {
			t.Errorf("%dx%d: no game with a pass; the test proves nothing", n, n)
		}
	}
}

func TestDiagram(t *testing.T) {
	b := MustNew(4)
	want := "" +
		"  a b c d\n" +
		"1 . . . .\n" +
		"2 . O X .\n" +
		"3 . X O .\n" +
		"4 . . . .\n" +
		"black to move\n"
	if got := b.Diagram(b.Start()); got != want {
		t.Errorf("Diagram(start) =\n%s\nwant\n%s", got, want)
	}
	p, err := MustNew(8).ParseMoves("f5")
	if err != nil {
		t.Fatal(err)
	}
	d := MustNew(8).Diagram(p)
	if !strings.Contains(d, "5 . . . X X X . .\n") || !strings.HasSuffix(d, "white to move\n") {
		t.Errorf("Diagram after f5:\n%s", d)
	}
}

// TestRows: a row a string, the first row first, each square's character
// its disc or the empty one given, on every board size.
func TestRows(t *testing.T) {
	after := func(size int, moves string) Position {
		p, err := MustNew(size).ParseMoves(moves)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		size  int
		p     Position
		empty byte
		want  []string
	}{
		{4, MustNew(4).Start(), '.', []string{"....", ".OX.", ".XO.", "...."}},
		{6, after(6, "d5"), '-', []string{"------", "------", "--OX--", "--XX--", "---X--", "------"}},
		{8, after(8, "f5 d6"), '.', []string{"........", "........", "........", "...OX...", "...OXX..", "...O....", "........", "........"}},
	}
	for _, tt := range tests {
		if got := MustNew(tt.size).Rows(tt.p, tt.empty); !slices.Equal(got, tt.want) {
			t.Errorf("%dx%d Rows(%v, %q) = %q, want %q", tt.size, tt.size, tt.p, tt.empty, got, tt.want)
		}
	}
}

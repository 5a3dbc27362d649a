package board

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestKeyOrderMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var ps []Position
	for _, n := range sizes {
		b := MustNew(n)
		for k := 0; k < 300; k++ {
			ps = append(ps, randomPosition(b, rng))
		}
		randomGame(b, rng, func(p Position) { ps = append(ps, p) })
	}
	// Near-equal pairs: differing only in the lowest bit or only in side.
	ps = append(ps, Position{Occ: 1}, Position{Occ: 1, White: 1}, Position{Occ: 1, Side: White}, Position{Occ: 3, White: 2}, Position{Occ: 1 << 63})
	for i := 0; i < 20000; i++ {
		a, c := ps[rng.Intn(len(ps))], ps[rng.Intn(len(ps))]
		want := Compare(a, c)
		if got := bytes.Compare(a.AppendKey(nil), c.AppendKey(nil)); got != want {
			t.Fatalf("key order of %v, %v = %d, Compare = %d", a, c, got, want)
		}
		if got := strings.Compare(a.Text(), c.Text()); got != want {
			t.Fatalf("text order of %v, %v = %d, Compare = %d", a, c, got, want)
		}
		if (want == 0) != (a == c) {
			t.Fatalf("Compare(%v, %v) = %d but equality is %v", a, c, want, a == c)
		}
		if sign(Compare(c, a)) != -want {
			t.Fatalf("Compare not antisymmetric on %v, %v", a, c)
		}
	}
	sorted := slices.Clone(ps)
	slices.SortFunc(sorted, Compare)
	for i := 1; i < len(sorted); i++ {
		if sorted[i-1].Text() > sorted[i].Text() {
			t.Fatalf("sorted positions give unsorted text at %d", i)
		}
	}
}

func TestKeyFormat(t *testing.T) {
	// The 8x8 start: d4 (bit 27) and e5 (bit 36) white, e4 (28) and d5
	// (35) black; the key layout is fixed by REFERENCE-level convention.
	b := MustNew(8)
	p := b.Start()
	if got, want := p.Text(), "b0000001818000000"+"0000001008000000"; got != want {
		t.Errorf("start Text = %s, want %s", got, want)
	}
	if p.String() != p.Text() {
		t.Error("String differs from Text")
	}
	wantKey := []byte{0, 0, 0, 0, 0x18, 0x18, 0, 0, 0, 0, 0, 0, 0x10, 0x08, 0, 0, 0}
	if got := p.AppendKey([]byte("x")); !bytes.Equal(got[1:], wantKey) || got[0] != 'x' {
		t.Errorf("start key = %x, want %x after the prefix", got, wantKey)
	}
	w := Position{Occ: ^uint64(0), White: 0xfedcba9876543210, Side: White}
	if got, want := w.Text(), "wfffffffffffffffffedcba9876543210"; got != want {
		t.Errorf("Text = %s, want %s", got, want)
	}
}

func TestKeyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, n := range sizes {
		b := MustNew(n)
		for k := 0; k < 2000; k++ {
			p := randomPosition(b, rng)
			text := p.Text()
			if len(text) != TextLen || strings.ContainsAny(text, `/\#?`) {
				t.Fatalf("text key %q has wrong length or a forbidden character", text)
			}
			if q, err := b.ParseText(text); err != nil || q != p {
				t.Fatalf("ParseText(%q) = %v, %v; want %v", text, q, err, p)
			}
			key := p.AppendKey(nil)
			if len(key) != KeyLen {
				t.Fatalf("key length %d", len(key))
			}
			if q, err := b.DecodeKey(key); err != nil || q != p {
				t.Fatalf("DecodeKey(%x) = %v, %v; want %v", key, q, err, p)
			}
		}
	}
}

func TestParseTextErrors(t *testing.T) {
	b4, b8 := MustNew(4), MustNew(8)
	tests := []struct {
		name string
		b    *Board
		in   string
		want error
		msg  string
	}{
		{"empty", b8, "", ErrSyntax, "length"},
		{"short", b8, "b000000181800000000000010080000", ErrSyntax, "length"},
		{"long", b8, "b00000018180000000000001008000000" + "0", ErrSyntax, "length"},
		{"side", b8, "x00000018180000000000001008000000", ErrSyntax, "side"},
		{"upper side", b8, "B00000018180000000000001008000000", ErrSyntax, "side"},
		{"upper hex", b8, "b00000018180000000000001008000000"[:5] + "A" + "00000018180000000000001008000000"[5:], ErrSyntax, "hex"},
		{"bad occupancy hex", b8, "b0000001818g000000000001008000000", ErrSyntax, "occupancy"},
		{"bad white hex", b8, "b000000181800000000000010080000-0", ErrSyntax, "white"},
		{"off the 4x4 board", b4, b8.Start().Text(), ErrInvalid, "off the"},
		{"white unoccupied", b8, "b00000018180000000000001008000001", ErrInvalid, "unoccupied"},
	}
	for _, tc := range tests {
		_, err := tc.b.ParseText(tc.in)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: ParseText(%q) error = %v, want %v mentioning %q", tc.name, tc.in, err, tc.want, tc.msg)
		}
	}
}

func TestDecodeKeyErrors(t *testing.T) {
	b4, b8 := MustNew(4), MustNew(8)
	good := b8.Start().AppendKey(nil)
	tests := []struct {
		name string
		b    *Board
		in   []byte
		want error
	}{
		{"nil", b8, nil, ErrSyntax},
		{"short", b8, good[:16], ErrSyntax},
		{"long", b8, append(slices.Clone(good), 0), ErrSyntax},
		{"side 2", b8, append([]byte{2}, good[1:]...), ErrSyntax},
		{"off the 4x4 board", b4, good, ErrInvalid},
		{"white unoccupied", b8, append(slices.Clone(good[:16]), 1), ErrInvalid},
	}
	for _, tc := range tests {
		if _, err := tc.b.DecodeKey(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: DecodeKey(%x) error = %v, want %v", tc.name, tc.in, err, tc.want)
		}
	}
}

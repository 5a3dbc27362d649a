package packed

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func encodeKeys(t testing.TB, ps []board.Position, o Options) []byte {
	return encode(t, NewKeyWriter, ps, o)
}

func keyCases(t *testing.T) []struct {
	name  string
	keys  []board.Position
	block int
} {
	full := ^uint64(0)
	return []struct {
		name  string
		keys  []board.Position
		block int
	}{
		{"empty", nil, 0},
		{"one", plyPositions(t, 0), 0},
		{"extremes", []board.Position{
			{Side: 0}, {Side: 0, Occ: 1}, {Side: 0, Occ: 1, White: 1}, {Side: 0, Occ: 1 << 63},
			{Side: 0, Occ: full}, {Side: 0, Occ: full, White: 1}, {Side: 0, Occ: full, White: full},
			{Side: 1, Occ: 1}, {Side: 1, Occ: full, White: full - 1},
		}, 0},
		{"ply 6, blocks of 5", plyPositions(t, 6), 5},
		{"ply 8", plyPositions(t, 8), 0},
	}
}

func TestKeysRoundTrip(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		for _, tc := range keyCases(t) {
			t.Run(tc.name, func(t *testing.T) {
				b := encodeKeys(t, tc.keys, Options{BlockEntries: tc.block})
				got, err := DecodeKeys(b)
				if err != nil {
					t.Fatal(err)
				}
				checkDecoded(t, "keys", got, tc.keys)
				// Appending to a slice that holds a position already,
				// with room for fewer than the blob's: it stays first.
				kept := board.Position{Side: 1, Occ: 7, White: 2}
				got, err = DecodeKeysTo(append(make([]board.Position, 0, 2), kept), b)
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != kept {
					t.Fatalf("DecodeKeysTo replaced the first position with %v", got[0])
				}
				checkDecoded(t, "keys appended", got[1:], tc.keys)
			})
		}
	})
}

func TestKeyIndex(t *testing.T) {
	for _, tc := range keyCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeKeys(t, tc.keys, Options{BlockEntries: tc.block})
			r := bytes.NewReader(b)
			ix, err := OpenKeyIndex(r, int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if ix.Positions != int64(len(tc.keys)) {
				t.Fatalf("index counts %d positions, want %d", ix.Positions, len(tc.keys))
			}
			// Every position by number and by key, and a position
			// just after each one, which is absent unless it is the next.
			step := max(1, len(tc.keys)/500)
			for i := 0; i < len(tc.keys); i += step {
				p, err := ReadKeyAt(r, ix, int64(i))
				if err != nil || p != tc.keys[i] {
					t.Fatalf("ReadKeyAt %d = %v, %v; want %v", i, p, err, tc.keys[i])
				}
				n, found, err := FindKey(r, ix, tc.keys[i])
				if err != nil || !found || n != int64(i) {
					t.Fatalf("FindKey %v = %d, %v, %v; want %d, true", tc.keys[i], n, found, err, i)
				}
				after := tc.keys[i]
				if after.White == ^uint64(0) {
					continue
				}
				after.White++ // may leave Occ: Compare does not care
				n, found, err = FindKey(r, ix, after)
				wantFound := i+1 < len(tc.keys) && tc.keys[i+1] == after
				if err != nil || found != wantFound || n != int64(i+1) {
					t.Fatalf("FindKey %v = %d, %v, %v; want %d, %v", after, n, found, err, i+1, wantFound)
				}
			}
			if _, found, err := FindKey(r, ix, board.Position{}); err != nil || found != (len(tc.keys) > 0 && tc.keys[0] == board.Position{}) {
				t.Fatalf("FindKey of the smallest position: %v, %v", found, err)
			}
			if _, err := ReadKeyAt(r, ix, ix.Positions); err == nil {
				t.Fatal("ReadKeyAt past the end succeeded")
			}
		})
	}
}

func TestKeyWriterRefusesDuplicates(t *testing.T) {
	w, err := NewKeyWriter(&bytes.Buffer{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := board.MustNew(8).Start()
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(p); !errors.Is(err, ErrOrder) {
		t.Fatalf("Add of a duplicate: %v, want ErrOrder", err)
	}
}

// TestAddKeys checks that AddKeys writes what Add writes for each
// position, bit for bit, on blocks of any size and cut into calls
// anywhere, and refuses positions out of order.
func TestAddKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 8))
	cases := keyCases(t)
	for _, discs := range []int{1, 17, 40, 63} {
		var ps []board.Position
		for _, e := range randomWords(rng, 3000, discs, true, 0) {
			p := board.Position{Side: board.Color(e.Low >> 63), Occ: e.Occ, White: WhiteDiscs(e.Occ, e.Low&^(1<<63))}
			if len(ps) == 0 || ps[len(ps)-1] != p {
				ps = append(ps, p)
			}
		}
		for _, block := range []int{0, 1, 2, 7, 64} {
			cases = append(cases, struct {
				name  string
				keys  []board.Position
				block int
			}{fmt.Sprintf("discs=%d block=%d", discs, block), ps, block})
		}
	}
	for _, tc := range cases {
		whiteWays(t, func(t *testing.T) {
			want := encodeKeys(t, tc.keys, Options{BlockEntries: tc.block})
			var got bytes.Buffer
			kw, err := NewKeyWriter(&got, Options{BlockEntries: tc.block})
			if err != nil {
				t.Fatal(err)
			}
			for lo := 0; lo < len(tc.keys); {
				hi := min(len(tc.keys), lo+1+rng.IntN(len(tc.keys)))
				if err := kw.AddKeys(tc.keys[lo:hi]); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				lo = hi
			}
			if err := kw.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("%s: AddKeys wrote %d bytes, Add %d, and they differ", tc.name, got.Len(), len(want))
			}
		})
	}
	p := func(side board.Color, occ, white uint64) board.Position {
		return board.Position{Side: side, Occ: occ, White: white}
	}
	for _, ps := range [][]board.Position{
		{p(0, 0b11, 1), p(0, 0b11, 1)},
		{p(0, 0b11, 2), p(0, 0b11, 1)},
		{p(0, 0b110, 0), p(0, 0b101, 0)},
		{p(1, 0b11, 0), p(0, 0b11, 0)},
		{p(0, 0b11, 0), p(0, 0b11, 1), p(0, 0b11, 2), p(0, 0b11, 3), p(0, 0b101, 0), p(0, 0b11, 3)},
	} {
		kw, err := NewKeyWriter(new(bytes.Buffer), Options{BlockEntries: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := kw.AddKeys(ps); !errors.Is(err, ErrOrder) {
			t.Errorf("AddKeys(%v) = %v, want ErrOrder", ps, err)
		}
	}
}

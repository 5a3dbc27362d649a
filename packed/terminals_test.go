package packed

import (
	"errors"
	"reflect"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func TestTerminalListRoundTrip(t *testing.T) {
	b := board.MustNew(8)
	full := board.Position{Side: board.White, Occ: ^uint64(0), White: 0xf0f0f0f0f0f0f0f0}
	start := b.Start()
	for _, tc := range []struct {
		name string
		list TerminalList
	}{
		{"no positions", TerminalList{}},
		{"none terminal", TerminalList{Count: 1 << 20}},
		{"first and last", TerminalList{Count: 300, Indexes: []int64{0, 299}, Positions: []board.Position{start, full}}},
		{"neighbours", TerminalList{Count: 5, Indexes: []int64{1, 2, 3}, Positions: []board.Position{full, start, full}}},
		{"far apart", TerminalList{Count: 1 << 40, Indexes: []int64{7, 1<<40 - 1}, Positions: []board.Position{start, full}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.list.Append(nil)
			got, err := DecodeTerminalList(b, data)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.list
			if want.Indexes == nil {
				want.Indexes, want.Positions = []int64{}, []board.Position{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v, want %+v", got, want)
			}
		})
	}
}

// TestTerminalListRefuses checks every way a list can be wrong: each cut
// short, and lists whose fields break the rules.
func TestTerminalListRefuses(t *testing.T) {
	b := board.MustNew(6)
	p := b.Start()
	good := (&TerminalList{Count: 9, Indexes: []int64{2, 5}, Positions: []board.Position{p, p}}).Append(nil)
	if _, err := DecodeTerminalList(b, good); err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := DecodeTerminalList(b, good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
	off8x8 := board.Position{Occ: 1 << 63}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"index past the count", (&TerminalList{Count: 5, Indexes: []int64{5}, Positions: []board.Position{p}}).Append(nil)},
		{"more entries than positions", (&TerminalList{Count: 1, Indexes: []int64{0, 0}, Positions: []board.Position{p, p}}).Append(nil)},
		{"a disc off the board", (&TerminalList{Count: 5, Indexes: []int64{1}, Positions: []board.Position{off8x8}}).Append(nil)},
		{"a bad side", (&TerminalList{Count: 5, Indexes: []int64{1}, Positions: []board.Position{{Side: 2, Occ: p.Occ}}}).Append(nil)},
		{"a byte too many", append(good[:len(good):len(good)], 0)},
	} {
		if _, err := DecodeTerminalList(b, tc.data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
	bad := append([]byte{terminalListVersion + 1}, good[1:]...)
	if _, err := DecodeTerminalList(b, bad); !errors.Is(err, ErrVersion) {
		t.Errorf("unknown version: %v, want ErrVersion", err)
	}
}

// FuzzTerminalList feeds DecodeTerminalList any bytes: it must refuse
// them with ErrCorrupt or decode a list that Append encodes to bytes
// that decode to the same list.
func FuzzTerminalList(f *testing.F) {
	b := board.MustNew(8)
	f.Add((&TerminalList{Count: 300, Indexes: []int64{0, 299}, Positions: []board.Position{b.Start(), b.Start()}}).Append(nil))
	f.Add((&TerminalList{Count: 3}).Append(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeTerminalList(b, data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := DecodeTerminalList(b, l.Append(nil))
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("decoded %+v from %x, which encodes to %+v, %v", l, data, again, err)
		}
	})
}

// TestTerminalListMatches checks a list against its blob's keys: it
// matches them only with their count and each listed position at its
// index.
func TestTerminalListMatches(t *testing.T) {
	b := board.MustNew(6)
	p := b.Start()
	q := board.Position{Side: board.White, Occ: p.Occ, White: p.White}
	keys := []board.Position{p, q, p, q}
	for _, tc := range []struct {
		name string
		list TerminalList
		ok   bool
	}{
		{"none listed", TerminalList{Count: 4}, true},
		{"two listed", TerminalList{Count: 4, Indexes: []int64{1, 2}, Positions: []board.Position{q, p}}, true},
		{"last listed", TerminalList{Count: 4, Indexes: []int64{3}, Positions: []board.Position{q}}, true},
		{"fewer positions", TerminalList{Count: 3}, false},
		{"more positions", TerminalList{Count: 5}, false},
		{"another position", TerminalList{Count: 4, Indexes: []int64{1, 2}, Positions: []board.Position{q, q}}, false},
		{"one index off", TerminalList{Count: 4, Indexes: []int64{0}, Positions: []board.Position{q}}, false},
	} {
		err := tc.list.Matches(keys)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

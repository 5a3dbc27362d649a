package dedup

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func TestEntryRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	es := append(randEntries(rng, 1000, 0),
		Entry{},
		Entry{Pos: board.Position{Occ: ^uint64(0), White: ^uint64(0), Side: board.White}, Ref: Ref{^uint32(0), ^uint32(0)}},
	)
	for _, e := range es {
		b := AppendEntry(nil, e)
		if len(b) != EntryLen {
			t.Fatalf("AppendEntry(%v) has %d bytes, want %d", e, len(b), EntryLen)
		}
		got, err := DecodeEntry(b)
		if err != nil || got != e {
			t.Fatalf("DecodeEntry(AppendEntry(%v)) = %v, %v", e, got, err)
		}
	}
}

func TestEntryByteOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// A pool makes equal positions common, so the Ref fields get compared.
	es := randEntries(rng, 2000, 50)
	es = append(es, randEntries(rng, 2000, 0)...)
	for i := 1; i < len(es); i++ {
		a, b := es[i-1], es[i]
		want := CompareEntries(a, b)
		if got := bytes.Compare(AppendEntry(nil, a), AppendEntry(nil, b)); got != want {
			t.Fatalf("bytes.Compare(%v, %v) = %d, CompareEntries = %d", a, b, got, want)
		}
		if got := less(&a, &b); got != (want < 0) {
			t.Fatalf("less(%v, %v) = %v, CompareEntries = %d", a, b, got, want)
		}
		if got := lessBits(&a, &b); got != map[bool]uint64{false: 0, true: 1}[want < 0] {
			t.Fatalf("lessBits(%v, %v) = %v, CompareEntries = %d", a, b, got, want)
		}
	}
}

func TestCompareEntries(t *testing.T) {
	p := board.Position{Occ: 0x18, White: 0x08}
	tests := []struct {
		name string
		a, b Entry
		want int
	}{
		{"equal", Entry{Pos: p, Ref: Ref{1, 2}}, Entry{Pos: p, Ref: Ref{1, 2}}, 0},
		{"position first", Entry{Pos: p, Ref: Ref{9, 9}}, Entry{Pos: board.Position{Occ: 0x19}, Ref: Ref{0, 0}}, -1},
		{"side before occupancy", Entry{Pos: board.Position{Occ: 1, Side: board.White}}, Entry{Pos: board.Position{Occ: 2}}, 1},
		{"blob before index", Entry{Pos: p, Ref: Ref{1, 9}}, Entry{Pos: p, Ref: Ref{2, 0}}, -1},
		{"index", Entry{Pos: p, Ref: Ref{1, 3}}, Entry{Pos: p, Ref: Ref{1, 2}}, 1},
		{"unsigned", Entry{Pos: p, Ref: Ref{1 << 31, 0}}, Entry{Pos: p, Ref: Ref{1, 0}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompareEntries(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareEntries = %d, want %d", got, tt.want)
			}
			if got := CompareEntries(tt.b, tt.a); got != -tt.want {
				t.Errorf("reversed CompareEntries = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	good := AppendEntry(nil, Entry{Pos: board.Position{Occ: 0xff, White: 0x0f, Side: board.White}, Ref: Ref{1, 2}})
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"short", good[:EntryLen-1]},
		{"long", append(bytes.Clone(good), 0)},
		{"side 2", mutate(func(b []byte) []byte { b[0] = 2; return b })},
		{"side 255", mutate(func(b []byte) []byte { b[0] = 255; return b })},
		{"white off occupied", mutate(func(b []byte) []byte { b[8] = 0x0e; return b })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := DecodeEntry(tt.in); !errors.Is(err, ErrCorrupt) {
				t.Errorf("DecodeEntry(%x) error = %v, want ErrCorrupt", tt.in, err)
			}
		})
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(AppendEntry(nil, Entry{Pos: board.MustNew(8).Start(), Ref: Ref{0, 0}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if e.Pos.Side > board.White || e.Pos.White&^e.Pos.Occ != 0 {
			t.Fatalf("DecodeEntry(%x) accepted invalid %v", b, e)
		}
		if re := AppendEntry(nil, e); !bytes.Equal(re, b) {
			t.Fatalf("AppendEntry(DecodeEntry(%x)) = %x", b, re)
		}
	})
}

package message

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// FuzzParseMessage checks that ParseMessage never panics, that every error
// is ErrBadMessage, and that what it accepts formats back to a message
// that parses to the same thing.
func FuzzParseMessage(f *testing.F) {
	b := board.MustNew(8)
	o := StandardOrigin(b)
	key := b.Canonical(b.Start()).Text()
	for _, s := range []string{
		"A00-" + key, "A00-" + key + "," + key, "C05-3-p05/f-abc-0001", "S07", "M07-3",
		"M07-0", "R09-12", "R09-12-p09/f-00003-0001-ab", "X05-p05/e-000001", "", "garbage", "S0\xff", "M07-2,x", "X05-p06/x",
		"D05-0-3", "B07-64-128", "D05-3-3", "B05-1", "D05--1-2", "S07-3", "S07-0", "S07-", "S07-+3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseMessage(o, text)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %q is not ErrBadMessage", err)
			}
			return
		}
		again, err := ParseMessage(o, m.Format())
		if err != nil {
			t.Fatalf("%q parses, but its format %q does not: %v", text, m.Format(), err)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("%q parses to %+v, its format %q to %+v", text, m, m.Format(), again)
		}
	})
}

// TestParseMessageTooLong covers what no queue delivers: text over Azure's
// 64 KiB limit.
func TestParseMessageTooLong(t *testing.T) {
	_, err := ParseMessage(StandardOrigin(board.MustNew(8)), "S05"+strings.Repeat("x", storage.MaxMessageBytes))
	if want := "bad message: message of 65539 bytes is over the 64 KiB limit"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestPliesCountFromTheStart: a run seeded from another position numbers
// its plies from there, so an inline message's positions must have as
// many more discs than the start as its ply says.
func TestPliesCountFromTheStart(t *testing.T) {
	b := board.MustNew(6)
	start, err := b.ParseMoves("c2b2a2")
	if err != nil {
		t.Fatal(err)
	}
	o := Origin{Board: b, Start: start}
	child := b.Canonical(start)
	tests := []struct {
		text string
		ok   bool
	}{
		{"A00-" + child.Text(), true},
		{"A03-" + child.Text(), false}, // ply 3 counted from the usual start
		{"S29", true},                  // 36 squares, 7 discs at the start
		{"S30", false},
	}
	for _, tc := range tests {
		if _, err := ParseMessage(o, tc.text); (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.text, err, tc.ok)
		}
	}
	if got := o.Ply(start); got != 0 {
		t.Errorf("Ply(start) = %d, want 0", got)
	}
}

// TestParseRangeMessages: D and B name a range of leaves [from, to),
// from below to, both indexes; anything else is refused.
func TestParseRangeMessages(t *testing.T) {
	o := StandardOrigin(board.MustNew(8))
	for _, tc := range []struct {
		text     string
		from, to int
		ok       bool
	}{
		{"D05-0-1", 0, 1, true},
		{"D17-0-28900", 0, 28900, true},
		{"B18-64-128", 64, 128, true},
		{"D05-3-3", 0, 0, false},   // empty
		{"D05-4-2", 0, 0, false},   // reversed
		{"B05-1", 0, 0, false},     // no end
		{"D05-1-2-3", 0, 0, false}, // trailing
		{"D05--1-2", 0, 0, false},
		{"D05-0-x", 0, 0, false},
		{"B05-0-1073741825", 0, 0, false}, // past 1<<30
		{"D05", 0, 0, false},
	} {
		m, ok := parsed(t, o, tc.text, tc.ok)
		if !ok {
			continue
		}
		if m.Index != tc.from || m.End != tc.to || m.Format() != tc.text {
			t.Errorf("%s: leaves [%d, %d), formats as %s; want [%d, %d)", tc.text, m.Index, m.End, m.Format(), tc.from, tc.to)
		}
	}
}

// TestParseScanMessages: S names node 0 of a ply's tree of scans by the
// ply alone, as every release sends it, and a node past it by its
// number; node 0 has that one text.
func TestParseScanMessages(t *testing.T) {
	o := StandardOrigin(board.MustNew(8))
	for _, tc := range []struct {
		text string
		node int
		ok   bool
	}{
		{"S07", 0, true},
		{"S07-1", 1, true},
		{"S18-2812", 2812, true},
		{"S07-0", 0, false}, // node 0 is S07
		{"S07-", 0, false},
		{"S07x", 0, false},
		{"S07--1", 0, false},
		{"S07-1-2", 0, false},
		{"S07-1073741825", 0, false}, // past 1<<30
	} {
		m, ok := parsed(t, o, tc.text, tc.ok)
		if !ok {
			continue
		}
		if m.Index != tc.node || m.Format() != tc.text {
			t.Errorf("%s: node %d, formats as %s; want %d", tc.text, m.Index, m.Format(), tc.node)
		}
	}
}

// TestParseResolveMessages: R names a final blob by its index, and may
// name its blob too, which must lie in the ply's folder; R without the
// blob is what earlier releases sent.
func TestParseResolveMessages(t *testing.T) {
	o := StandardOrigin(board.MustNew(8))
	for _, tc := range []struct {
		text  string
		index int
		blob  string
		ok    bool
	}{
		{"R09-12", 12, "", true},
		{"R09-12-p09/f-00003-0001-ab12-2", 12, "p09/f-00003-0001-ab12-2", true},
		{"R00-0-p00/start", 0, "p00/start", true},
		{"R09-12-p08/f-00003-0001-ab", 0, "", false}, // another ply's folder
		{"R09-12-", 0, "", false},
		{"R09--p09/x", 0, "", false},
		{"R09-x-p09/x", 0, "", false},
		{"R09", 0, "", false},
	} {
		m, ok := parsed(t, o, tc.text, tc.ok)
		if !ok {
			continue
		}
		if m.Index != tc.index || m.Blob != tc.blob || m.Format() != tc.text {
			t.Errorf("%s: index %d, blob %q, formats as %s; want %d, %q", tc.text, m.Index, m.Blob, m.Format(), tc.index, tc.blob)
		}
	}
}

// parsed parses text, which must parse if ok and otherwise be refused
// as ErrBadMessage; it reports whether it parsed as it must.
func parsed(t *testing.T, o Origin, text string, ok bool) (Message, bool) {
	t.Helper()
	m, err := ParseMessage(o, text)
	switch {
	case (err == nil) != ok:
		t.Errorf("%s: error %v, want ok=%v", text, err, ok)
		return m, false
	case err != nil && !errors.Is(err, ErrBadMessage):
		t.Errorf("%s: error %v is not ErrBadMessage", text, err)
	}
	return m, err == nil
}

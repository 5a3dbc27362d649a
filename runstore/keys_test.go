package runstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// bigIndexes are indexes in increasing order, across every change of
// code length up to past 10^10 and the largest int.
var bigIndexes = []int{0, 1, 9, 99_999, 999_999, 1_000_000, 9_999_999, 10_000_000, 10_000_001,
	99_999_999, 100_000_000, 1_234_567_890, 9_999_999_999, 10_000_000_000, 10_000_000_001,
	12_562_785_000, 99_999_999_999, 1 << 40, 1 << 62, math.MaxInt}

// TestIndexCodes: the codes of both widths sort in index order and read
// back, a code followed by more of a key still sorts in index order,
// and below 10^width a code is the zero-padded decimal that runs seeded
// before the wide codes wrote.
func TestIndexCodes(t *testing.T) {
	for _, width := range []int{indexWidth, bucketWidth} {
		var prev string
		for k, i := range bigIndexes {
			code := formatIndex(width, i)
			if got, ok := parseIndex(code, width); !ok || got != i {
				t.Errorf("width %d: %q reads as %d, %v, want %d", width, code, got, ok, i)
			}
			if got, rest, ok := cutIndex(code+"-0001", width); !ok || got != i || rest != "-0001" {
				t.Errorf("width %d: %q-0001 cuts as %d, %q, %v", width, code, got, rest, ok)
			}
			if old := fmt.Sprintf("%0*d", width, i); len(old) == width && code != old {
				t.Errorf("width %d: %d is %q, not the earlier layout's %q", width, i, code, old)
			}
			if k > 0 && (prev >= code || prev+"-9999" >= code+"-0000") {
				t.Errorf("width %d: %q (%d) does not sort after %q", width, code, i, prev)
			}
			prev = code
		}
	}
}

// TestIndexCodesRefused: what formatIndex never writes is not read.
func TestIndexCodesRefused(t *testing.T) {
	for _, s := range []string{"", "123456", "12345a7", "A01234567", "A1234567", "B12345678",
		"L9999999999999999999", "M12345678901234567890", "Z12345678", "-000001", "+000001"} {
		if i, ok := parseIndex(s, indexWidth); ok {
			t.Errorf("%q reads as %d", s, i)
		}
	}
}

// TestKeysPastTenBillion: every numbered key and blob name, built for
// indexes past 10^10, sorts in index order and reads back.
func TestKeysPastTenBillion(t *testing.T) {
	m := stageMarkers{item: 'd'}
	type naming struct {
		what  string
		name  func(i int) string
		parse func(name string) (int, bool)
	}
	row := func(prefix string) func(string) (int, bool) {
		return func(k string) (int, bool) {
			d := decode(storage.Entity{RowKey: k}, nil)
			i := d.keyIndex(prefix)
			return i, d.err == nil
		}
	}
	for _, n := range []naming{
		{"item marker", func(i int) string { return markerKey(m.item, i) }, row("d")},
		{"final blob row", rkFinal, row("")},
		{"notice row", func(i int) string { return rkNotice(i, 3) }, func(k string) (int, bool) {
			g, _, _ := strings.Cut(k, "-")
			return parseIndex(g, indexWidth)
		}},
		{"merge output row", func(i int) string { return rkOutput(i, "a1", 2) }, func(k string) (int, bool) {
			i, rest, ok := cutIndex(strings.TrimPrefix(k, "s"), bucketWidth)
			return i, ok && rest == "-a1-0002"
		}},
		{"results blob", func(i int) string { return ResultsBlobName(18, i) }, func(name string) (int, bool) {
			b, ok := ParseBlobName(name)
			return b.Index, ok && b.Kind == ResultsBlob && b.Ply == 18
		}},
		{"expansion blob", func(i int) string { return ExpansionBlobName(18, i, "a1") }, placed(ExpansionBlob)},
		{"combine blob", func(i int) string { return CombineBlobName(18, i, "a1") }, placed(CombineBlob)},
		{"merged blob", func(i int) string { return FinalRunBlobName(18, i, 7, "a1") }, placed(FinalRunBlob)},
		{"range inputs blob", func(i int) string { return RangeInputsBlobName(18, i) }, kindOnly(InputsBlob)},
		{"combine inputs blob", func(i int) string { return CombineInputsBlobName(18, i) }, kindOnly(CombineInputsBlob)},
	} {
		var names []string
		for _, i := range bigIndexes {
			name := n.name(i)
			if got, ok := n.parse(name); !ok || got != i {
				t.Errorf("%s %q reads as %d, %v, want %d", n.what, name, got, ok, i)
			}
			names = append(names, name)
		}
		if !slices.IsSorted(names) {
			t.Errorf("%ss do not sort in index order: %q", n.what, names)
		}
	}
	if pk := pkNotices(18, 12_562_785_000); pk != "n18-D12562785000" {
		t.Errorf("notice partition of final blob 12,562,785,000: %q", pk)
	}
}

// kindOnly reads a blob name of a kind whose index BlobName does not
// hold: the name must parse as the kind, and its index follows the last
// hyphen.
func kindOnly(kind BlobKind) func(string) (int, bool) {
	return func(name string) (int, bool) {
		b, ok := ParseBlobName(name)
		i, n := parseIndex(name[strings.LastIndex(name, "-")+1:], indexWidth)
		return i, ok && n && b.Kind == kind
	}
}

// placed reads a blob name's index as Placement does: the blob kind
// must parse and the index decide the account.
func placed(kind BlobKind) func(string) (int, bool) {
	return func(name string) (int, bool) {
		b, ok := ParseBlobName(name)
		if !ok || b.Kind != kind {
			return 0, false
		}
		width := indexWidth
		if kind == FinalRunBlob {
			width = bucketWidth
		}
		i, ok := number(name, width)
		if ok && (Placement{Accounts: 1000}).Blob(name) != (b.Ply+i%1000)%1000 {
			return 0, false
		}
		return i, ok
	}
}

// TestMarkersPastTenMillion commits markers on both sides of 10^7 and
// 10^10 and reads them back in order, by span and whole.
func TestMarkersPastTenMillion(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	p := &Ply{Ply: 18, State: Resolved, Totals: Totals{Finals: 20_000_000_000}}
	st := s.ResolutionStage(p)
	items := []int{9_999_999, 10_000_000, 123, 9_999_999_999, 10_000_000_000, 10_000_000_001}
	for _, i := range items {
		if _, err := st.Commit(ctx, Resolution{Index: i, Counts: Counts{Black: int64(i % 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.Markers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(items)
	for k, r := range all {
		if r.Index != items[k] || r.Black != int64(items[k]%1000) {
			t.Errorf("marker %d is %d (black %d), want %d", k, r.Index, r.Black, items[k])
		}
	}
	in, err := st.MarkersIn(ctx, Span{Lo: 9_999_999, Hi: 10_000_000_001})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range in {
		got = append(got, r.Index)
	}
	if want := []int{9_999_999, 10_000_000, 9_999_999_999, 10_000_000_000}; !slices.Equal(got, want) {
		t.Errorf("markers in [9,999,999, 10,000,000,001): %v, want %v", got, want)
	}
	if err := s.PutNotices(ctx, 19, 10_000_000_123, 10_000_000_000, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	from, err := s.NoticesFrom(ctx, 18, 10_000_000_000)
	if err != nil || len(from) != 1 || len(from[10_000_000_123]) != 2 {
		t.Errorf("notices from child 10,000,000,123: %v, %v", from, err)
	}
}

// FuzzCutIndex: an index code read from outside input (a row key, a
// listed blob's name) is the one formatIndex writes for its index.
func FuzzCutIndex(f *testing.F) {
	for _, s := range []string{"0000000", "9999999-0001", "A12345678", "D12562785000-x", "L9223372036854775807", "A0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, width := range []int{indexWidth, bucketWidth} {
			i, rest, ok := cutIndex(s, width)
			if ok && (i < 0 || formatIndex(width, i)+rest != s) {
				t.Fatalf("width %d: %q cuts as %d and %q", width, s, i, rest)
			}
		}
	})
}

// FuzzParseBlobName: a listed blob's name parses, or is refused, without
// panicking; a results blob's name is the one its index makes, and any
// name is placed on one of the accounts.
func FuzzParseBlobName(f *testing.F) {
	for _, s := range []string{ResultsBlobName(18, 12_562_785_000), ResultsBlobName(3, 1), ExpansionBlobName(18, 10_000_000, "a"),
		FinalRunBlobName(18, 1_000_000, 3, "a"), CombineBlobName(2, 5, "b"), PlyFolder(0) + "start", InputsBlobName(4), "p01/r-", "p01/e-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		b, ok := ParseBlobName(name)
		if ok && b.Kind == ResultsBlob && ResultsBlobName(b.Ply, b.Index) != name {
			t.Fatalf("%q parses as results of ply %d blob %d", name, b.Ply, b.Index)
		}
		if ok && !strings.HasPrefix(name, PlyFolder(b.Ply)) {
			t.Fatalf("%q parses as ply %d", name, b.Ply)
		}
		if a := (Placement{Accounts: 7}).Blob(name); a < 0 || a >= 7 {
			t.Fatalf("%q on 7 accounts: account %d", name, a)
		}
	})
}

package dedup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

func mergeAll(runs []*Reader) ([]Entry, int64, error) {
	var out []Entry
	read, err := Merge(runs, func(e Entry) error {
		out = append(out, e)
		return nil
	})
	return out, read, err
}

func TestMergeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for iter := range 300 {
		k := rng.IntN(21)
		pool := 1 + rng.IntN(200)
		var all []Entry
		var runs []*Reader
		for range k {
			n := rng.IntN(60)
			if rng.IntN(5) == 0 {
				n = 0
			}
			es := randEntries(rng, n, pool)
			SortEntries(es) // not compacted: duplicates within a run stay
			all = append(all, es...)
			runs = append(runs, readerOf(es))
		}
		got, read, err := mergeAll(runs)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if read != int64(len(all)) {
			t.Fatalf("iteration %d: read %d, want %d", iter, read, len(all))
		}
		if want := sortedCompact(all); !slices.Equal(got, want) {
			t.Fatalf("iteration %d (%d runs): merged %d entries, want %d", iter, k, len(got), len(want))
		}
	}
}

func TestMergeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	sorted := func(n int) []Entry {
		es := randEntries(rng, n, 0)
		SortEntries(es)
		return es
	}
	a, b := sorted(100), sorted(100)
	unsorted := slices.Clone(b)
	unsorted[40], unsorted[41] = unsorted[41], unsorted[40]
	backwardsFirst := slices.Clone(b)
	backwardsFirst[0], backwardsFirst[1] = backwardsFirst[1], backwardsFirst[0]
	truncated := encode(b)
	truncated = truncated[:len(truncated)-3]
	corrupt := encode(b)
	corrupt[50*EntryLen] = 2
	boom := errors.New("boom")
	tests := []struct {
		name string
		runs func() []*Reader
		emit func(Entry) error
		want error
	}{
		{"out of order", func() []*Reader { return []*Reader{readerOf(a), readerOf(unsorted)} }, nil, ErrOrder},
		{"out of order at start", func() []*Reader { return []*Reader{readerOf(backwardsFirst)} }, nil, ErrOrder},
		{"truncated", func() []*Reader { return []*Reader{readerOf(a), NewReader(bytes.NewReader(truncated))} }, nil, io.ErrUnexpectedEOF},
		{"corrupt", func() []*Reader { return []*Reader{NewReader(bytes.NewReader(corrupt)), readerOf(a)} }, nil, ErrCorrupt},
		{"emit error", func() []*Reader { return []*Reader{readerOf(a), readerOf(b)} }, func(Entry) error { return boom }, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emit := tt.emit
			if emit == nil {
				emit = func(Entry) error { return nil }
			}
			if _, err := Merge(tt.runs(), emit); !errors.Is(err, tt.want) {
				t.Fatalf("Merge error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestMergeOneAndNone(t *testing.T) {
	if got, read, err := mergeAll(nil); err != nil || read != 0 || len(got) != 0 {
		t.Errorf("Merge(nil) = %v, %d, %v", got, read, err)
	}
	es := []Entry{{Ref: Ref{0, 1}}, {Ref: Ref{0, 1}}, {Ref: Ref{0, 2}}}
	got, read, err := mergeAll([]*Reader{readerOf(es)})
	if err != nil || read != 3 || !slices.Equal(got, es[1:]) {
		t.Errorf("Merge of one run = %v, %d, %v", got, read, err)
	}
}

func TestGrouper(t *testing.T) {
	p := board.Position{Occ: 0x18, White: 0x08}
	q := board.Position{Occ: 0x18, White: 0x10}
	type group struct {
		pos  board.Position
		refs []Ref
	}
	tests := []struct {
		name string
		in   []Entry
		want []group
		err  error
	}{
		{"empty", nil, nil, nil},
		{"one", []Entry{{p, Ref{1, 2}}}, []group{{p, []Ref{{1, 2}}}}, nil},
		{"folds parents", []Entry{{p, Ref{0, 1}}, {p, Ref{0, 5}}, {p, Ref{2, 0}}, {q, Ref{0, 0}}},
			[]group{{p, []Ref{{0, 1}, {0, 5}, {2, 0}}}, {q, []Ref{{0, 0}}}}, nil},
		{"drops duplicates", []Entry{{p, Ref{0, 1}}, {p, Ref{0, 1}}, {q, Ref{0, 0}}, {q, Ref{0, 0}}},
			[]group{{p, []Ref{{0, 1}}}, {q, []Ref{{0, 0}}}}, nil},
		{"position out of order", []Entry{{q, Ref{0, 0}}, {p, Ref{0, 1}}}, nil, ErrOrder},
		{"ref out of order", []Entry{{p, Ref{0, 2}}, {p, Ref{0, 1}}}, nil, ErrOrder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []group
			g := NewGrouper(func(pos board.Position, refs []Ref) error {
				got = append(got, group{pos, slices.Clone(refs)})
				return nil
			})
			var err error
			for _, e := range tt.in {
				if err = g.Add(e); err != nil {
					break
				}
			}
			if err == nil {
				err = g.Close()
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("groups %v, want %v", got, tt.want)
			}
			if g.Groups() != int64(len(tt.want)) {
				t.Errorf("Groups() = %d, want %d", g.Groups(), len(tt.want))
			}
		})
	}
}

func TestGrouperCallbackError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	g := NewGrouper(func(board.Position, []Ref) error { calls++; return boom })
	p := board.Position{Occ: 1}
	q := board.Position{Occ: 2}
	if err := g.Add(Entry{Pos: p}); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(Entry{Pos: q}); !errors.Is(err, boom) {
		t.Fatalf("Add = %v, want boom", err)
	}
	if err := g.Close(); !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Close = %v after %d calls, want boom after 1", err, calls)
	}
}

// FuzzReader feeds arbitrary bytes, split into up to four runs, to Reader
// and Merge: they must never panic, and whatever Merge emits without error
// must be the sorted, duplicate-free union of what the runs hold.
func FuzzReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(19, 20))
	es := randEntries(rng, 6, 3)
	SortEntries(es)
	f.Add(byte(0), encode(es))
	f.Add(byte(1), encode(es))
	f.Add(byte(3), encode(es)[:EntryLen*3+4])
	f.Fuzz(func(t *testing.T, k byte, data []byte) {
		// One reader over everything: entries until the first bad record.
		r := NewReader(bytes.NewReader(data))
		all := readAll(r)
		if r.Err() == nil && len(data)%EntryLen != 0 {
			t.Fatalf("%d bytes read without error", len(data))
		}
		if r.Err() == nil && len(all) != len(data)/EntryLen {
			t.Fatalf("read %d entries from %d bytes", len(all), len(data))
		}

		n := int(k%4) + 1
		var runs []*Reader
		var parts [][]byte
		for i := range n {
			part := data[len(data)*i/n : len(data)*(i+1)/n]
			parts = append(parts, part)
			runs = append(runs, NewReader(bytes.NewReader(part)))
		}
		got, read, err := mergeAll(runs)
		var want []Entry
		valid := true // every part decodes and is sorted
		for _, part := range parts {
			pr := NewReader(bytes.NewReader(part))
			es := readAll(pr)
			valid = valid && pr.Err() == nil && slices.IsSortedFunc(es, CompareEntries)
			want = append(want, es...)
		}
		if valid != (err == nil) {
			t.Fatalf("runs valid and sorted: %v, but Merge error = %v", valid, err)
		}
		if err != nil {
			return
		}
		if read != int64(len(want)) {
			t.Fatalf("Merge read %d, the runs hold %d", read, len(want))
		}
		if want = sortedCompact(want); !slices.Equal(got, want) {
			t.Fatalf("Merge emitted %v, want %v", got, want)
		}
	})
}

func BenchmarkMerge(b *testing.B) {
	const k, n = 16, 100000
	rng := rand.New(rand.NewPCG(21, 22))
	var blobs [][]byte
	for range k {
		es := randEntries(rng, n, 0)
		SortEntries(es)
		blobs = append(blobs, encode(es))
	}
	b.SetBytes(k * n * EntryLen)
	for b.Loop() {
		runs := make([]*Reader, k)
		for i, blob := range blobs {
			runs[i] = NewReader(bytes.NewReader(blob))
		}
		var sum uint64
		read, err := Merge(runs, func(e Entry) error { sum += e.Pos.Occ; return nil })
		if err != nil || read != k*n {
			b.Fatal(read, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(k*n), "ns/entry")
}

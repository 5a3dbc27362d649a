package dedup

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
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
		{"truncated", func() []*Reader { return []*Reader{readerOf(a), newReader(bytes.NewReader(truncated))} }, nil, io.ErrUnexpectedEOF},
		{"corrupt", func() []*Reader { return []*Reader{newReader(bytes.NewReader(corrupt)), readerOf(a)} }, nil, ErrCorrupt},
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
		r := newReader(bytes.NewReader(data))
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
			runs = append(runs, newReader(bytes.NewReader(part)))
		}
		got, read, err := mergeAll(runs)
		var want []Entry
		valid := true // every part decodes and is sorted
		for _, part := range parts {
			pr := newReader(bytes.NewReader(part))
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
			runs[i] = newReader(bytes.NewReader(blob))
		}
		var sum uint64
		read, err := Merge(runs, func(e Entry) error { sum += e.Pos.Occ; return nil })
		if err != nil || read != k*n {
			b.Fatal(read, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(k*n), "ns/entry")
}

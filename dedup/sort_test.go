package dedup

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
)

func TestSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	same := Entry{Pos: board.Position{Occ: 0x1818000000, White: 0x0800000000}, Ref: Ref{Blob: 3, Index: 4}}
	tests := []struct {
		name string
		in   []Entry
	}{
		{"empty", nil},
		{"one", randEntries(rng, 1, 0)},
		{"small", randEntries(rng, 30, 0)},
		{"random", randEntries(rng, 5000, 0)},
		{"many duplicates", randEntries(rng, 5000, 20)},
		{"all equal", slices.Repeat([]Entry{same}, 3000)},
		{"equal positions", func() []Entry {
			es := randEntries(rng, 3000, 1)
			for i := range es {
				es[i].Ref = Ref{Blob: rng.Uint32N(4) << 30, Index: rng.Uint32()}
			}
			return es
		}()},
		{"sorted", sortedCompact(randEntries(rng, 3000, 0))},
		{"reversed", func() []Entry {
			es := sortedCompact(randEntries(rng, 3000, 0))
			slices.Reverse(es)
			return es
		}()},
		// Large enough for the parallel path, with a skewed first digit.
		{"large duplicates", randEntries(rng, 3*parallelMin, 1000)},
		{"large random", randEntries(rng, 3*parallelMin, 0)},
		{"real ply", slices.Clone(realEntries())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := slices.Clone(tt.in)
			slices.SortFunc(want, packed.CompareEdges)
			got := slices.Clone(tt.in)
			SortEntries(got)
			if !slices.Equal(got, want) {
				t.Fatalf("SortEntries differs from slices.SortFunc")
			}
			if got, want := slices.Compact(got), slices.CompactFunc(want, func(a, b Entry) bool { return packed.CompareEdges(a, b) == 0 }); !slices.Equal(got, want) {
				t.Fatalf("Compact kept %d entries, want %d", len(got), len(want))
			}
		})
	}
}

func TestSortEntriesSingleCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rng := rand.New(rand.NewPCG(7, 8))
	es := randEntries(rng, 2*parallelMin, 500)
	want := slices.Clone(es)
	slices.SortFunc(want, packed.CompareEdges)
	SortEntries(es)
	if !slices.Equal(es, want) {
		t.Fatal("SortEntries with GOMAXPROCS=1 differs from slices.SortFunc")
	}
}

// lessCompare is an inlined three-way comparator for the pdqsort baseline.
func lessCompare(a, b Entry) int {
	if less(&a, &b) {
		return -1
	}
	if less(&b, &a) {
		return 1
	}
	return 0
}

func BenchmarkSortEntries(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	inputs := []struct {
		name string
		es   []Entry
	}{
		{"random1M", randEntries(rng, 1<<20, 0)},
		{"dups1M", randEntries(rng, 1<<20, 100000)},
		{"realPly9", realEntries()},
	}
	sorts := []struct {
		name string
		sort func([]Entry)
	}{
		{"SortEntries", SortEntries},
		{"radix1core", func(es []Entry) { radixSort(es, 0) }},
		{"pdqsortInlined", func(es []Entry) { slices.SortFunc(es, lessCompare) }},
		{"pdqsortCompareEdges", func(es []Entry) { slices.SortFunc(es, packed.CompareEdges) }},
	}
	for _, in := range inputs {
		for _, s := range sorts {
			b.Run(fmt.Sprintf("%s/%s", in.name, s.name), func(b *testing.B) {
				es := make([]Entry, len(in.es))
				b.SetBytes(int64(len(es) * keyDigits))
				for b.Loop() {
					b.StopTimer()
					copy(es, in.es)
					b.StartTimer()
					s.sort(es)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(es)), "ns/entry")
			})
		}
	}
}

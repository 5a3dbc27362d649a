package parallel

import (
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestRanges: the buckets that are large enough, where the sizes put
// them, largest first.
func TestRanges(t *testing.T) {
	tests := []struct {
		name   string
		counts []int
		min    int
		want   []Range
	}{
		{"none", nil, 1, nil},
		{"empty buckets skipped", []int{0, 3, 0, 1}, 1, []Range{{0, 3}, {3, 4}}},
		{"small ones skipped", []int{1, 5, 1, 2}, 2, []Range{{1, 6}, {7, 9}}},
		{"largest first, ties in order", []int{2, 4, 2, 4}, 1, []Range{{2, 6}, {8, 12}, {0, 2}, {6, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ranges(tt.counts, tt.min); !slices.Equal(got, tt.want) {
				t.Fatalf("Ranges(%v, %d) = %v, want %v", tt.counts, tt.min, got, tt.want)
			}
		})
	}
}

// TestDo: every range is done once, by workers of their own, at most
// GOMAXPROCS of them.
func TestDo(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			ranges := Ranges([]int{5, 1, 0, 7, 3, 3, 9, 2}, 1)
			var mu sync.Mutex
			var done []Range
			workers := 0
			Do(ranges, func() func(Range) {
				mu.Lock()
				workers++
				mu.Unlock()
				return func(r Range) {
					mu.Lock()
					done = append(done, r)
					mu.Unlock()
				}
			})
			slices.SortFunc(done, func(a, b Range) int { return a.Lo - b.Lo })
			want := slices.Clone(ranges)
			slices.SortFunc(want, func(a, b Range) int { return a.Lo - b.Lo })
			if !slices.Equal(done, want) || workers < 1 || workers > procs {
				t.Fatalf("GOMAXPROCS %d: %d workers did %v, want %v", procs, workers, done, want)
			}
		}()
	}
}

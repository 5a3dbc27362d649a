// Package parallel works through the buckets of a partitioned slice on
// every processor: the second half of the parallel radix sorts of dedup
// and expand, whose first pass partitions the slice on one goroutine.
package parallel

import (
	"runtime"
	"slices"
	"sync"
)

// A Range is the bucket Lo..Hi of a partitioned slice.
type Range struct{ Lo, Hi int }

// Ranges returns the buckets of at least min entries of a slice cut into
// buckets of the sizes counts, in order, largest first.
func Ranges(counts []int, min int) []Range {
	var rs []Range
	start := 0
	for _, c := range counts {
		if c >= min {
			rs = append(rs, Range{start, start + c})
		}
		start += c
	}
	slices.SortStableFunc(rs, func(a, b Range) int { return (b.Hi - b.Lo) - (a.Hi - a.Lo) })
	return rs
}

// Do works through the ranges, in order, on GOMAXPROCS goroutines: given
// largest first, a large one does not end up last. Each goroutine calls
// worker once and gives each range it takes to the function that
// returned, which may keep working memory of its own.
func Do(ranges []Range, worker func() func(Range)) {
	work := make(chan Range, len(ranges))
	for _, r := range ranges {
		work <- r
	}
	close(work)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ranges)) {
		wg.Go(func() {
			do := worker()
			for r := range work {
				do(r)
			}
		})
	}
	wg.Wait()
}

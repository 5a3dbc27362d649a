package dedup

import (
	"runtime"

	"github.com/reversi-cloud/reversi/internal/parallel"
)

// SortEntries sorts es by packed.CompareEdges.
//
// It is an in-place MSD radix sort (American flag sort) on the bytes of the
// encoded entry, falling back to insertion sort for small buckets. Children
// of one ply mostly share the side to move and, being canonical, their
// leading occupancy bytes; digits that every entry of a bucket shares cost one
// counting pass and no moves. It is about 3.5 times faster than pdqsort
// (slices.SortFunc) on random entries and 1.5 to 3 times on real ply data
// (BenchmarkSortEntries). Large inputs are sorted on GOMAXPROCS goroutines
// after the first partitioning pass: a worker expands one message at a time,
// so the other cores would otherwise idle. That costs the same CPU time as
// sorting on one goroutine, so it can only gain wall time.
func SortEntries(es []Entry) {
	if len(es) < parallelMin || runtime.GOMAXPROCS(0) < 2 {
		radixSort(es, 0)
		return
	}
	parallelSort(es, 0)
}

const (
	// smallSort is the bucket size below which insertion sort beats another
	// counting pass. 32, 64, 128 and 256 were measured on random, duplicate-
	// heavy and real ply data; 64 was best or near it on all three.
	smallSort = 64
	// parallelMin is the input size below which goroutines cost more than
	// they save.
	parallelMin = 1 << 15
	// keyDigits is the number of radix digits: one per byte of the sort
	// key (side, occupancy, white discs, parent blob, parent index).
	keyDigits = 1 + 8 + 8 + 4 + 4
)

// word returns the 64-bit field that holds digit d and the shift that brings
// the digit to the low byte. Hoisting this out of the inner loops keeps them
// to a load, a shift and a mask.
func word(d int) (field int, shift uint) {
	switch {
	case d == 0:
		return 0, 0
	case d <= 8:
		return 1, 64 - 8*uint(d)
	case d <= 16:
		return 2, 64 - 8*uint(d-8)
	default:
		return 3, 64 - 8*uint(d-16)
	}
}

// fieldOf returns the 64-bit field number f of e, as numbered by word.
func fieldOf(e *Entry, f int) uint64 {
	switch f {
	case 0:
		return uint64(e.Pos.Side)
	case 1:
		return e.Pos.Occ
	case 2:
		return e.Pos.White
	}
	return uint64(e.Ref.Blob)<<32 | uint64(e.Ref.Index)
}

// radixSort sorts es, all of whose encodings agree on digits before d.
func radixSort(es []Entry, d int) {
	var counts [256]int
	for {
		if len(es) <= smallSort {
			insertionSort(es)
			return
		}
		if d >= keyDigits {
			return // all keys equal
		}
		if !partition(es, d, &counts) {
			d++ // every entry shares this digit
			continue
		}
		start := 0
		for _, c := range counts {
			if c > 1 {
				radixSort(es[start:start+c], d+1)
			}
			start += c
		}
		return
	}
}

// partition permutes es into buckets by digit d and leaves the bucket sizes
// in counts. It returns false, having moved nothing, when every entry has
// the same digit.
func partition(es []Entry, d int, counts *[256]int) bool {
	*counts = [256]int{}
	f, sh := word(d)
	for i := range es {
		counts[byte(fieldOf(&es[i], f)>>sh)]++
	}
	if counts[byte(fieldOf(&es[0], f)>>sh)] == len(es) {
		return false
	}
	// American flag sort: next[b] is where the next entry of bucket b goes,
	// end[b] where bucket b ends. Each entry is moved at most once into its
	// final bucket, following cycles.
	var next, end [256]int
	sum := 0
	for b, c := range counts {
		next[b] = sum
		sum += c
		end[b] = sum
	}
	for b := range 256 {
		for i := next[b]; i < end[b]; i = next[b] {
			e := es[i]
			db := byte(fieldOf(&e, f) >> sh)
			for int(db) != b {
				j := next[db]
				next[db]++
				es[j], e = e, es[j]
				db = byte(fieldOf(&e, f) >> sh)
			}
			es[i] = e
			next[b]++
		}
	}
	return true
}

func insertionSort(es []Entry) {
	for i := 1; i < len(es); i++ {
		e := es[i]
		j := i
		for ; j > 0 && less(&e, &es[j-1]); j-- {
			es[j] = es[j-1]
		}
		es[j] = e
	}
}

// parallelSort sorts es, whose encodings agree on digits before d. It
// partitions on the first digit that differs, then sorts the buckets on
// GOMAXPROCS goroutines, largest first so that a big bucket does not end up
// last. A bucket holding most of the input (a digit skewed by canonical
// forms) is itself sorted in parallel first, so the goroutines get
// comparable work.
func parallelSort(es []Entry, d int) {
	var counts [256]int
	for ; d < keyDigits && !partition(es, d, &counts); d++ {
	}
	if d == keyDigits {
		return
	}
	d++
	buckets := parallel.Ranges(counts[:], 2)
	if len(buckets) > 0 {
		if b := buckets[0]; b.Hi-b.Lo > len(es)/2 && b.Hi-b.Lo >= parallelMin {
			parallelSort(es[b.Lo:b.Hi], d)
			buckets = buckets[1:]
		}
	}
	parallel.Do(buckets, func() func(parallel.Range) {
		return func(b parallel.Range) { radixSort(es[b.Lo:b.Hi], d) }
	})
}

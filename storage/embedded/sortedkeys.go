package embedded

import (
	"slices"
	"sort"
)

// chunkMax bounds a chunk of sortedKeys; full chunks split in two.
const chunkMax = 256

// sortedKeys is an ordered set of strings stored as a list of sorted
// chunks, so an insert or delete moves at most one chunk's elements rather
// than the whole set, and a range scan is a binary search and a walk.
// Table partitions and blob listings grow to millions of keys while being
// written to and scanned in turn; a sorted slice would make every insert
// O(n) and sorting on every scan would make every scan O(n log n).
type sortedKeys struct {
	chunks [][]string // non-empty, each sorted, each below the next
}

// find returns the chunk that holds k or would: the first whose last key
// is >= k, or the last chunk.
func (s *sortedKeys) find(k string) int {
	i := sort.Search(len(s.chunks), func(i int) bool {
		c := s.chunks[i]
		return c[len(c)-1] >= k
	})
	if i == len(s.chunks) && i > 0 {
		i--
	}
	return i
}

// insert adds k; it reports false if k was present.
func (s *sortedKeys) insert(k string) bool {
	if len(s.chunks) == 0 {
		s.chunks = append(s.chunks, []string{k})
		return true
	}
	ci := s.find(k)
	c := s.chunks[ci]
	i, found := slices.BinarySearch(c, k)
	if found {
		return false
	}
	c = slices.Insert(c, i, k)
	if len(c) > chunkMax {
		half := len(c) / 2
		tail := slices.Clone(c[half:])
		clear(c[half:]) // let the moved strings go from this array
		c = c[:half]
		s.chunks = slices.Insert(s.chunks, ci+1, tail)
	}
	s.chunks[ci] = c
	return true
}

// remove deletes k; it reports false if k was absent.
func (s *sortedKeys) remove(k string) bool {
	if len(s.chunks) == 0 {
		return false
	}
	ci := s.find(k)
	c := s.chunks[ci]
	i, found := slices.BinarySearch(c, k)
	if !found {
		return false
	}
	c = slices.Delete(c, i, i+1)
	if len(c) == 0 {
		s.chunks = slices.Delete(s.chunks, ci, ci+1)
	} else {
		s.chunks[ci] = c
	}
	return true
}

// ascend calls fn on each key >= from in order until fn returns false.
func (s *sortedKeys) ascend(from string, fn func(string) bool) {
	if len(s.chunks) == 0 {
		return
	}
	ci := s.find(from)
	i, _ := slices.BinarySearch(s.chunks[ci], from)
	for ; ci < len(s.chunks); ci, i = ci+1, 0 {
		for _, k := range s.chunks[ci][i:] {
			if !fn(k) {
				return
			}
		}
	}
}

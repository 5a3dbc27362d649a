package expand

import (
	"math/bits"
	"runtime"
	"unsafe"

	"github.com/reversi-cloud/reversi/internal/parallel"
)

// sortEdges sorts es as 128-bit numbers (hi, then lo), with tmp, at
// least as long, as scratch space. occ, if not nil, is where the
// occupancies of es differ (generate's), which the first pass then need
// not read es to find.
//
// It is an MSD radix sort that moves the edges between es and tmp: each
// pass reads a range in order and writes each edge to its digit's
// bucket in the other buffer, so the reads stream and the 256 writing
// positions each move forward, where an in-place sort (dedup.SortEntries,
// American flag sort) follows chains of swaps, each a cache miss the
// next swap waits for. Its digit is the 8 bits from the highest bit in
// which the range's edges differ down, not a fixed byte: children of
// one ply share most bits of their occupancy (the centre is always
// full, the edges mostly empty), and a fixed byte would often put almost
// all of a range in one bucket and need another pass. Large ranges take
// a wider digit, whose values are mapped onto 256 buckets of about equal
// size (scatterWide). Ranges of at most smallEdges are left to insertion
// sort. Large inputs are sorted on GOMAXPROCS goroutines after the first
// pass, as dedup.SortEntries does.
func sortEdges(es, tmp []edge, occ *occSpan) {
	tmp = tmp[:len(es)]
	if len(es) <= smallEdges {
		insertionEdges(es)
		return
	}
	// The first pass here, with the generation's span where it has one
	// (on one goroutine too: finding the digit is a read of every edge).
	first := new(edgeSorter)
	var counts []int
	if differ := occ.differ(); len(es) >= wideEdges && differ != 0 {
		counts = first.scatterWideAt(es, tmp, 0, 0, uint(max(bits.Len64(differ)-wideBits, 0)))
	} else {
		var ok bool
		if counts, ok = first.scatter(es, tmp, 0); !ok {
			return // all equal
		}
	}
	// The buckets are in tmp, each to be sorted back into es.
	first.sortBuckets(tmp, es, counts, 1)
}

// sortBuckets sorts each bucket of src, whose sizes counts gives in
// order, into dst: on this goroutine at depth levels of recursion, or,
// for a large input, on GOMAXPROCS goroutines, the largest buckets first
// so that a large one does not end up last.
func (s *edgeSorter) sortBuckets(src, dst []edge, counts []int, depth int) {
	if len(src) < parallelEdges || runtime.GOMAXPROCS(0) < 2 {
		s.buckets(src, dst, counts, false, depth)
		return
	}
	parallel.Do(parallel.Ranges(counts, 1), func() func(parallel.Range) {
		var w edgeSorter
		return func(r parallel.Range) { w.radix(src[r.Lo:r.Hi], dst[r.Lo:r.Hi], false, 0) }
	})
}

const (
	// smallEdges is the range size below which insertion sort beats
	// another pass. 8, 16, 24 and 32 were measured (BenchmarkSortEdges),
	// with digits of up to 8, 10, 12 and 14 bits: within the noise of a
	// shared machine, 16 and 8 bits were as good as any.
	smallEdges = 16
	// parallelEdges is the input size below which goroutines cost more
	// than they save.
	parallelEdges = 1 << 15
)

// An edgeSorter is one goroutine's working memory for radix: the bucket
// sizes of each level of the recursion, and where the next edge of each
// bucket goes (placeHalves). Kept across calls, they need not be
// cleared whole each time: a small range uses a few buckets only
// (digitBits), and clearing and scanning 256 of them for a range of 40
// edges cost more than sorting it. wide serves the wide digits of large
// ranges (scatterWide), and is allocated by the first: at 576 KiB,
// allocating and clearing it for every sort cost more than sorting the
// few hundred edges of a small blob's expansion.
type edgeSorter struct {
	counts [][256]int
	next   [256]int // the next place in each bucket of the range's first half
	next2  [256]int // and of its second half
	first  [256]int // each bucket's edges of the first half
	wide   *wideTables
}

// wideTables are scatterWide's histogram of a range's digit values and
// the bucket each value goes to.
type wideTables struct {
	hist     [1 << wideBits]uint32
	first    [1 << wideBits]uint32 // hist of the range's first half
	bucketOf [1 << wideBits]uint8
}

// radix sorts the edges of src, at depth levels of recursion. They end
// in src if home, else in dst, which is as long and is scratch space
// either way.
func (s *edgeSorter) radix(src, dst []edge, home bool, depth int) {
	if len(src) <= smallEdges {
		insertionEdges(src)
		if !home {
			copy(dst, src)
		}
		return
	}
	counts, ok := s.scatter(src, dst, depth)
	if !ok {
		if !home {
			copy(dst, src)
		}
		return
	}
	// The buckets are in dst now; sorting each back into src leaves them
	// home when src is home.
	s.buckets(dst, src, counts, !home, depth+1)
}

// buckets sorts each bucket of src, whose sizes counts gives in order,
// at depth levels of recursion: each ends in src if home, else in dst,
// as radix leaves a range. Small buckets are sorted
// here rather than by a call each, which cost more than sorting the
// bucket itself: most buckets hold a few edges.
func (s *edgeSorter) buckets(src, dst []edge, counts []int, home bool, depth int) {
	start := 0
	for _, c := range counts {
		switch {
		case c > smallEdges:
			s.radix(src[start:start+c], dst[start:start+c], home, depth)
		case c > 1:
			insertionEdges(src[start : start+c])
			fallthrough
		case c == 1:
			if !home {
				copy(dst[start:start+c], src[start:start+c])
			}
		}
		start += c
	}
}

// digitBits is the width of the digit for a range of n edges below
// wideEdges: 8 bits from 1,024 edges, fewer for smaller ranges, 4 to 8
// edges a bucket.
func digitBits(n int) uint { return uint(min(8, max(2, bits.Len(uint(n))-3))) }

// wideBits is the width of the digit of ranges of at least wideEdges,
// whose values scatterWide maps in order onto 256 buckets of about equal
// size. Even the highest 8 bits that differ put most of a range in one
// bucket, since the occupancies' bits are far from even (the edge
// squares mostly empty): the children of ply 9 moved 6.9 times each in
// the sort with 8-bit digits alone, and 16-bit digits mapped so for
// large ranges took a sixth less time (docs/performance.md).
const (
	wideBits  = 16
	wideEdges = 1 << 16
)

// scatter moves the edges of src into dst by their digit, bucket after
// bucket in digit order, and returns the bucket sizes (in the counts of
// depth, good until the next scatter at that depth). It returns false,
// having moved nothing, if the edges are all equal.
func (s *edgeSorter) scatter(src, dst []edge, depth int) ([]int, bool) {
	if len(src) >= wideEdges {
		return s.scatterWide(src, dst, depth)
	}
	width := digitBits(len(src))
	word, shift, ok := digit(src, width)
	if !ok {
		return nil, false
	}
	mask := uint64(1)<<width - 1
	counts := s.level(depth)[:1<<width]
	first := s.first[:len(counts)]
	clear(counts)
	clear(first)
	lo, hi, odd := halves(src)
	// The halves are counted apart, and then moved apart, for the same
	// reason (placeHalves).
	d := digitAt{word, shift, mask}
	d.countHalves(lo, hi, first, counts)
	for _, e := range odd {
		counts[d.of(e)]++
	}
	for b, c := range first {
		counts[b] += c
	}
	s.placeHalves(counts, first)
	d.moveHalves(dst, lo, hi, &s.next, &s.next2)
	for _, e := range odd {
		dst[s.next2[d.of(e)]] = e
	}
	return counts, true
}

// level returns the bucket sizes of depth, adding the level the first
// time.
func (s *edgeSorter) level(depth int) *[256]int {
	if depth == len(s.counts) {
		s.counts = append(s.counts, [256]int{})
	}
	return &s.counts[depth]
}

// placeHalves sets s.next and s.next2 to where the edges of each bucket
// of counts go: next for those of the range's first half (first gives how
// many), from the bucket's start, and next2 for those of its second
// half, after them. A scatter moves an edge of each half in turn, each
// with its own cursor. With a single cursor, the store of a bucket's
// cursor and its load for that bucket's next edge are a chain through
// memory, a few cycles an edge, whenever edges in a row go to the same
// bucket, as the occupancies' skew makes common; the two halves' chains
// overlap (BenchmarkSortEdges, docs/performance.md). The count before
// it takes its halves apart for the same reason.
func (s *edgeSorter) placeHalves(counts, first []int) {
	next, next2 := s.next[:len(counts)], s.next2[:len(counts)]
	sum := 0
	for b, c := range counts {
		next[b], next2[b] = sum, sum+first[b]
		sum += c
	}
}

// halves cuts es into two halves of the same length, and the last edge
// apart when their number is odd.
func halves(es []edge) (lo, hi, odd []edge) {
	lo, hi = es[:len(es)/2], es[len(es)/2:]
	return lo, hi[:len(lo)], hi[len(lo):]
}

// A digitAt is where a range's digit is: the word (0 for Occ, 1 for
// Low), the shift and the mask that bring it to the low bits.
type digitAt struct {
	word  int
	shift uint
	mask  uint64
}

// of returns e's digit, for the odd edge of a range; the scatters'
// loops take it inline.
func (d digitAt) of(e edge) uint64 {
	return [2]uint64{e.Occ, e.Low}[d.word&1] >> d.shift & d.mask
}

// words views es as pairs of words, Occ then Low, so that a loop takes
// its digit from either word by index (a digitAt's word) and one loop
// serves both, with no test of the word for each edge.
func words(es []edge) [][2]uint64 {
	return unsafe.Slice((*[2]uint64)(unsafe.Pointer(unsafe.SliceData(es))), len(es))
}

// The layout words relies on, Occ then Low and nothing else: either
// index is out of range, and the package does not compile, otherwise.
var (
	_ = [1]struct{}{}[unsafe.Offsetof(edge{}.Low)-8]
	_ = [1]struct{}{}[unsafe.Sizeof(edge{})-16]
)

// countHalves adds the digits of lo's edges to first and those of hi's
// to counts. It and the two below are functions of their own, not
// inlined, so that the loop's values stay in registers: in the scatter
// the compiler spilled and reloaded some ten of them an iteration.
//
//go:noinline
func (d digitAt) countHalves(lo, hi []edge, first, counts []int) {
	lw, hw, w, sh := words(lo), words(hi), d.word&1, d.shift&63
	hw = hw[:len(lw)]
	for i := range lw {
		first[lw[i][w]>>sh&d.mask]++
		counts[hw[i][w]>>sh&d.mask]++
	}
}

// moveHalves moves each edge of lo to dst at its bucket's cursor in
// next, and each of hi at its bucket's cursor in next2, moving the
// cursors on: an edge of each half in turn (placeHalves). The digit is
// at most 8 bits wide here.
//
//go:noinline
func (d digitAt) moveHalves(dst, lo, hi []edge, next, next2 *[256]int) {
	lw, hw, dw, w, sh := words(lo), words(hi), words(dst), d.word&1, d.shift&63
	hw = hw[:len(lw)]
	for i := range lw {
		bx, by := lw[i][w]>>sh&d.mask&255, hw[i][w]>>sh&d.mask&255
		dw[next[bx]] = lw[i]
		next[bx]++
		dw[next2[by]] = hw[i]
		next2[by]++
	}
}

// moveHalvesWide is moveHalves for a wide digit, whose values bucketOf
// maps to buckets (scatterWide).
//
//go:noinline
func (d digitAt) moveHalvesWide(dst, lo, hi []edge, bucketOf *[1 << wideBits]uint8, next, next2 *[256]int) {
	lw, hw, dw, w, sh := words(lo), words(hi), words(dst), d.word&1, d.shift&63
	hw = hw[:len(lw)]
	for i := range lw {
		bx, by := bucketOf[lw[i][w]>>sh&(1<<wideBits-1)], bucketOf[hw[i][w]>>sh&(1<<wideBits-1)]
		dw[next[bx]] = lw[i]
		next[bx]++
		dw[next2[by]] = hw[i]
		next2[by]++
	}
}

// scatterWide is scatter for a large range: its digit is wideBits wide,
// and its values are mapped onto buckets of about equal size (mapWide),
// so that each bucket is sorted on the digit's values it holds by the
// passes below it.
func (s *edgeSorter) scatterWide(src, dst []edge, depth int) ([]int, bool) {
	word, shift, ok := digit(src, wideBits)
	if !ok {
		return nil, false
	}
	return s.scatterWideAt(src, dst, depth, word, shift), true
}

// scatterWideAt is scatterWide with its digit at shift in word, as
// digit gives them for src.
func (s *edgeSorter) scatterWideAt(src, dst []edge, depth, word int, shift uint) []int {
	const mask = 1<<wideBits - 1
	if s.wide == nil {
		s.wide = new(wideTables)
	}
	hist, firstHist := &s.wide.hist, &s.wide.first
	clear(hist[:])
	lo, hi, odd := halves(src)
	w := word & 1
	for half, es := range [][]edge{lo, src[len(lo):]} {
		ws := words(es)
		for i := range ws {
			hist[ws[i][w]>>shift&mask]++
		}
		if half == 0 {
			*firstHist = *hist
		}
	}
	counts := s.level(depth)[:]
	clear(counts)
	counts = counts[:mapWide(hist, len(src), &s.wide.bucketOf, counts)]
	bucketOf := &s.wide.bucketOf
	first := s.first[:len(counts)]
	clear(first)
	for v, c := range firstHist {
		first[bucketOf[v]] += int(c)
	}
	s.placeHalves(counts, first)
	d := digitAt{word, shift, mask}
	d.moveHalvesWide(dst, lo, hi, bucketOf, &s.next, &s.next2)
	for _, e := range odd {
		dst[s.next2[bucketOf[d.of(e)]]] = e
	}
	return counts
}

// mapWide maps the values of a wide digit, whose histogram over n edges
// is hist, onto buckets in bucketOf: consecutive values share a bucket
// until it holds about a 256th of the edges, and a value more common
// than that has a bucket of its own. It adds each bucket's edges to
// counts, if not nil, and returns how many buckets it used.
func mapWide(hist *[1 << wideBits]uint32, n int, bucketOf *[1 << wideBits]uint8, counts []int) int {
	target := (n + 255) / 256
	b, fill := 0, 0
	for v, c := range hist {
		if fill > 0 && fill+int(c) > target && b < 255 {
			b++
			fill = 0
		}
		bucketOf[v] = uint8(b)
		fill += int(c)
		if counts != nil {
			counts[b] += int(c)
		}
	}
	return b + 1
}

// An occSpan is the and and the or of the occupancies of a set of edges:
// where they differ. generate takes it as it makes a task's edges, so
// that the sort's first pass need not read them all once more to find
// where its digit is (digit), a read of some 40 MB a task at 8x8 ply 13.
type occSpan struct{ and, or uint64 }

// emptySpan is the span of no edges.
var emptySpan = occSpan{and: ^uint64(0)}

// differ returns the bits in which the occupancies differ, none for a
// nil span.
func (s *occSpan) differ() uint64 {
	if s == nil {
		return 0
	}
	return s.and ^ s.or
}

// digit returns where the digit of es is: the word (0 for hi, 1 for lo)
// and the shift that brings its width bits, from the highest bit in
// which the edges differ down, to the low bits. It returns false if the
// edges are all equal.
func digit(es []edge, width uint) (word int, shift uint, ok bool) {
	andHi, orHi, andLo, orLo := ^uint64(0), uint64(0), ^uint64(0), uint64(0)
	for _, e := range es {
		andHi &= e.Occ
		orHi |= e.Occ
		andLo &= e.Low
		orLo |= e.Low
	}
	differ := andHi ^ orHi
	if differ == 0 {
		word, differ = 1, andLo^orLo
		if differ == 0 {
			return 0, 0, false
		}
	}
	return word, uint(max(bits.Len64(differ)-int(width), 0)), true
}

func insertionEdges(es []edge) {
	for i := 1; i < len(es); i++ {
		e := es[i]
		j := i
		for ; j > 0 && below(e, es[j-1]); j-- {
			es[j] = es[j-1]
		}
		es[j] = e
	}
}

// below reports whether a sorts before b as a 128-bit number: the borrow
// of a-b, one branch a step of the insertion where comparing Occ and
// then Low took two.
func below(a, b edge) bool {
	_, borrow := bits.Sub64(a.Low, b.Low, 0)
	_, borrow = bits.Sub64(a.Occ, b.Occ, borrow)
	return borrow != 0
}

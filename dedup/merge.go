package dedup

import (
	"fmt"

	"github.com/reversi-cloud/reversi/packed"
)

// Merge k-way merges sorted runs, dropping exact duplicate entries, and
// gives emit the remaining entries in packed.CompareEdges order, up to
// mergeBatch at a time (the slice is Merge's again once emit returns).
// It returns the number of entries read from all runs.
//
// Every run is sorted: an EdgeReader never returns an edge that sorts
// before the one it returned last (it fails with packed.ErrCorrupt
// instead), so a run that goes backwards, whose output would look sorted
// locally but keep duplicates, ends the merge and is never merged. Equal
// consecutive entries within a run are allowed and dropped. The first
// error from a run's reader or from emit ends the merge.
//
// The merge is a loser tree: each entry costs about log2(len(runs))
// comparisons, against twice that for a binary heap.
func Merge(runs []*packed.EdgeReader, emit func([]Entry) error) (read int64, err error) {
	k := len(runs)
	if k == 0 {
		return 0, nil
	}
	m := merger{
		runs: runs,
		head: make([]key, k),
		pre:  make([]prefix, k),
		tree: make([]int, k),
	}
	for i := range runs {
		if err := m.advance(i); err != nil {
			return m.read, err
		}
	}
	m.build()
	var last key
	emitted := false
	batch := make([]Entry, 0, mergeBatch)
	for {
		w := m.tree[0]
		e := m.head[w]
		if e.side == exhausted {
			// The winner is exhausted, so all are.
			if len(batch) > 0 {
				return m.read, emit(batch)
			}
			return m.read, nil
		}
		if !emitted || e != last {
			if batch = append(batch, e.entry()); len(batch) == mergeBatch {
				if err := emit(batch); err != nil {
					return m.read, err
				}
				batch = batch[:0]
			}
			last, emitted = e, true
		}
		if err := m.advance(w); err != nil {
			return m.read, err
		}
		m.replay(w)
	}
}

// mergeBatch is how many entries Merge gives emit at a time. A call for
// each entry, through a function value, which nothing inlines, and the
// callee's set-up for it cost more than the entries' trip through a
// batch in the cache.
const mergeBatch = 256

type merger struct {
	runs []*packed.EdgeReader
	// head is the current entry of each run, as the key it sorts by: the
	// zero key, which sorts first, before a run's first entry is read, and
	// a sentinel with side exhausted, which sorts last, once the run has
	// ended. Decoded entries never have that side, so the tournament needs
	// no flags.
	head []key
	// pre holds head's prefixes, which the replay compares.
	pre []prefix
	// tree[0] is the index of the winning run; tree[1:] are the losers of
	// the internal nodes of a complete binary tree whose leaves, at node
	// numbers k..2k-1, are the runs.
	tree []int
	read int64
}

// exhausted is the side of the head of an ended run.
const exhausted = 0xff

// beats reports whether run a's head goes before run b's.
func (m *merger) beats(a, b int) bool { return lessBits(m.head[a], m.head[b]) == 1 }

// advance loads the next entry of run i into head[i].
func (m *merger) advance(i int) error {
	e, ok := m.runs[i].Next()
	if !ok {
		m.exhaust(i)
		if err := m.runs[i].Err(); err != nil {
			return fmt.Errorf("dedup: merge: run %d: %w", i, err)
		}
		return nil
	}
	m.read++
	m.set(i, keyOf(&e))
	return nil
}

// set makes k run i's head.
func (m *merger) set(i int, k key) { m.head[i], m.pre[i] = k, prefixOf(k) }

// exhaust gives ended run i the head that sorts last.
func (m *merger) exhaust(i int) {
	m.head[i], m.pre[i] = key{side: exhausted}, prefix{^uint64(0), ^uint64(0)}
}

// build plays the initial tournament bottom-up.
func (m *merger) build() {
	k := len(m.runs)
	winners := make([]int, 2*k)
	for i := range k {
		winners[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := winners[2*n], winners[2*n+1]
		if m.beats(a, b) {
			winners[n], m.tree[n] = a, b
		} else {
			winners[n], m.tree[n] = b, a
		}
	}
	m.tree[0] = winners[1]
	if k == 1 {
		m.tree[0] = 0
	}
}

// replay restores the tournament after run w's head changed: only the path
// from w's leaf to the root can change. climb plays its matches on the
// runs' prefixes; where two prefixes are equal, the whole keys decide
// the match here, and climb goes on from the node above.
func (m *merger) replay(w int) {
	tree, pre := m.tree, m.pre
	c := pre[w]
	n := uint(w+len(tree)) / 2
	for {
		var stop uint
		if w, c, stop = climb(tree, pre, w, c, n); stop == 0 {
			break
		}
		// The prefixes are equal, so c stays as it is whichever wins.
		if t := tree[stop]; lessBits(m.head[t], m.head[w]) == 1 {
			tree[stop], w = w, t
		}
		n = stop / 2
	}
	tree[0] = w
}

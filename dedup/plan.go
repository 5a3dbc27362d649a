package dedup

import (
	"cmp"
	"slices"

	"github.com/reversi-cloud/reversi/board"
)

// Record is the range record of one sorted run registered in the table.
type Record struct {
	ID       string         // the record's RowKey
	Min, Max board.Position // smallest and largest position in the run (inclusive); Min <= Max
	Created  int64          // creation time (unix nanoseconds); smaller is older
	Count    int64          // entries in the run
	Merging  bool           // claimed by a merge in progress
}

// Overlaps reports whether the closed ranges [Min, Max] of a and b
// intersect.
func Overlaps(a, b Record) bool {
	return board.Compare(a.Min, b.Max) <= 0 && board.Compare(b.Min, a.Max) <= 0
}

// Priority classifies a merge partner p for the record r, in the article's
// order of preference: 1 if p's range contains r's, 2 if r's contains p's,
// 3 if p's minimum is below r's, 4 for any other overlap, and 0 if they do
// not overlap. Lower is better. Equal ranges are class 1.
//
// Containment comes first because merging a run with one that contains it
// shrinks the set of overlapping ranges fastest.
func Priority(r, p Record) int {
	if !Overlaps(r, p) {
		return 0
	}
	minCmp := board.Compare(p.Min, r.Min)
	maxCmp := board.Compare(p.Max, r.Max)
	switch {
	case minCmp <= 0 && maxCmp >= 0:
		return 1
	case minCmp >= 0 && maxCmp <= 0:
		return 2
	case minCmp < 0:
		return 3
	}
	return 4
}

// Group is one merge decided by Plan: the runs to merge, the oldest first.
type Group struct {
	IDs []string
	// Final is true when the group is its whole overlap component: its
	// output overlaps no other run, so it can be written as the ply's final,
	// split, non-overlapping runs.
	Final bool
	Count int64 // total entries of the group's runs
}

// Plan decides which runs to merge next.
//
// It sweeps the records (live and merging) sorted by Min to find the overlap
// components. Within each component of more than one record it repeatedly
// takes the oldest unassigned live record r (by Created, then ID) and gives
// it partners: unassigned live records that overlap r, ordered by
// Priority(r, p), then by age, at most fanIn-1 of them. If maxEntries > 0 it
// stops before the group's total Count would exceed maxEntries, but always
// takes at least one partner. A record with no partner stays alone this
// round. Merging records are never grouped; they still join components, so
// no group that a running merge could overlap is marked Final.
//
// Taking many runs at once is what makes the total merge work grow like N
// log N: whole-range runs are merged fanIn at a time, so each entry is read
// about log_fanIn(runs) times. A fanIn below 2 is taken as 2.
//
// complete is true when no two records overlap and none is Merging: the ply
// is then sorted and free of duplicates. Groups come in component order
// (ascending keys), then in the order they were formed. Plan is
// deterministic. Finding components is O(n log n). Choosing partners costs
// O(log m) per overlap for runs that overlap a few neighbours, about
// O(fanIn) per record for fresh whole-range runs, which mostly contain each
// other, and O(m) per record at worst (a component of m whole-range runs
// with few containments).
func Plan(records []Record, fanIn int, maxEntries int64) (groups []Group, complete bool) {
	fanIn = max(fanIn, 2)
	complete = true
	p := planner{records: records, fanIn: fanIn, maxEntries: maxEntries}
	components(records, func(comp []int) {
		if len(comp) > 1 || records[comp[0]].Merging {
			complete = false
		}
		if len(comp) > 1 {
			groups = p.component(comp, groups)
		}
	})
	return groups, complete
}

// components calls fn with each overlap component of records (indexes in
// Min order), in ascending key order: one sweep after sorting by Min.
func components(records []Record, fn func(comp []int)) {
	order := make([]int, len(records))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(board.Compare(records[a].Min, records[b].Min), cmp.Compare(a, b))
	})
	for start := 0; start < len(order); {
		hi := records[order[start]].Max
		end := start + 1
		for ; end < len(order) && board.Compare(records[order[end]].Min, hi) <= 0; end++ {
			if board.Compare(records[order[end]].Max, hi) > 0 {
				hi = records[order[end]].Max
			}
		}
		fn(order[start:end])
		start = end
	}
}

type planner struct {
	records    []Record
	fanIn      int
	maxEntries int64

	// Per component, over its live records numbered 0..m-1 in Min order:
	live     []int // record index
	byAge    []int // live numbers, oldest first
	rank     []int // rank[j] is j's place in byAge
	next     []int // age list of unassigned records, by rank; m ends it
	prev     []int // and backwards; -1 starts it
	head     int   // oldest unassigned rank
	tree     []int // segment tree over Min order: the unassigned j with the largest Max below a node, or -1
	leaves   int
	best     []candidate
	overlaps []int
}

// candidate is a possible partner, by live number j.
type candidate struct {
	j, rank, priority int
}

// betterThan orders candidates: by class, then age.
func (c candidate) betterThan(d candidate) bool {
	if c.priority != d.priority {
		return c.priority < d.priority
	}
	return c.rank < d.rank
}

// overlapLimit is the number of overlapping records beyond which the
// partner search stops enumerating them and scans by age instead.
func (p *planner) overlapLimit() int { return 4 * p.fanIn }

// component appends the groups of one overlap component.
//
// Two indexes keep the partner search cheap in the two shapes components
// take. Fresh whole-range runs all overlap each other and mostly contain
// each other: scanning the unassigned records oldest first can stop as
// soon as it holds fanIn-1 class-1 partners, since any record further on is
// younger and could not displace one. Settled or split runs overlap only a
// few neighbours: a segment tree over Min order with the largest Max of each
// subtree lists exactly those in O(log m) each. The search starts with the
// tree and falls back to the age scan when r overlaps many records.
func (p *planner) component(comp []int, groups []Group) []Group {
	p.live = p.live[:0]
	for _, i := range comp {
		if !p.records[i].Merging {
			p.live = append(p.live, i)
		}
	}
	m := len(p.live)
	p.byAge = grow(p.byAge, m)
	for j := range p.byAge {
		p.byAge[j] = j
	}
	slices.SortFunc(p.byAge, func(a, b int) int {
		ra, rb := &p.records[p.live[a]], &p.records[p.live[b]]
		return cmp.Or(cmp.Compare(ra.Created, rb.Created), cmp.Compare(ra.ID, rb.ID))
	})
	p.rank, p.next, p.prev = grow(p.rank, m), grow(p.next, m), grow(p.prev, m)
	for k, j := range p.byAge {
		p.rank[j] = k
		p.next[k], p.prev[k] = k+1, k-1
	}
	p.head = 0
	p.leaves = 1
	for p.leaves < m {
		p.leaves *= 2
	}
	p.tree = grow(p.tree, 2*p.leaves)
	for k := range p.tree {
		p.tree[k] = -1
	}
	for j := range m {
		p.tree[p.leaves+j] = j
	}
	for k := p.leaves - 1; k >= 1; k-- {
		p.tree[k] = p.maxChild(k)
	}

	for p.head < m {
		j := p.byAge[p.head]
		p.assign(j)
		rec := &p.records[p.live[j]]
		p.partners(j)
		if len(p.best) == 0 {
			continue // alone this round
		}
		g := Group{IDs: []string{rec.ID}, Count: rec.Count}
		for k, c := range p.best {
			partner := &p.records[p.live[c.j]]
			if k > 0 && p.maxEntries > 0 && g.Count+partner.Count > p.maxEntries {
				break
			}
			g.IDs = append(g.IDs, partner.ID)
			g.Count += partner.Count
			p.assign(c.j)
		}
		g.Final = len(g.IDs) == len(comp)
		groups = append(groups, g)
	}
	return groups
}

// partners leaves in p.best the best fanIn-1 unassigned partners of live
// record r, best first.
func (p *planner) partners(r int) {
	rec := &p.records[p.live[r]]
	p.best = p.best[:0]
	// Records that can overlap r start at or below r.Max: a prefix of Min
	// order.
	end, _ := slices.BinarySearchFunc(p.live, rec.Max, func(i int, max board.Position) int {
		if board.Compare(p.records[i].Min, max) <= 0 {
			return -1
		}
		return 1
	})
	p.overlaps = p.overlaps[:0]
	if p.collect(1, 0, p.leaves, end, rec.Min) {
		for _, j := range p.overlaps {
			p.offer(candidate{j: j, rank: p.rank[j], priority: Priority(*rec, p.records[p.live[j]])})
		}
		return
	}
	for k := p.head; k < len(p.byAge); k = p.next[k] {
		j := p.byAge[k]
		c := candidate{j: j, rank: k, priority: Priority(*rec, p.records[p.live[j]])}
		if c.priority == 0 {
			continue
		}
		p.offer(c)
		if len(p.best) == p.fanIn-1 && p.best[len(p.best)-1].priority == 1 {
			break
		}
	}
}

// offer inserts c into p.best if it is among the best fanIn-1 so far.
func (p *planner) offer(c candidate) {
	full := len(p.best) == p.fanIn-1
	if full && !c.betterThan(p.best[len(p.best)-1]) {
		return
	}
	if !full {
		p.best = append(p.best, c)
	}
	k := len(p.best) - 1
	for ; k > 0 && c.betterThan(p.best[k-1]); k-- {
		p.best[k] = p.best[k-1]
	}
	p.best[k] = c
}

// collect appends to p.overlaps the unassigned j < end under tree node k
// (covering [lo, hi)) whose Max is at least min. It returns false, leaving
// p.overlaps incomplete, once more than overlapLimit are found.
func (p *planner) collect(k, lo, hi, end int, min board.Position) bool {
	top := p.tree[k]
	if lo >= end || top < 0 || board.Compare(p.records[p.live[top]].Max, min) < 0 {
		return true
	}
	if hi-lo == 1 {
		p.overlaps = append(p.overlaps, lo)
		return len(p.overlaps) <= p.overlapLimit()
	}
	mid := (lo + hi) / 2
	return p.collect(2*k, lo, mid, end, min) && p.collect(2*k+1, mid, hi, end, min)
}

// maxChild returns the child of node k with the larger Max, or -1.
func (p *planner) maxChild(k int) int {
	a, b := p.tree[2*k], p.tree[2*k+1]
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case board.Compare(p.records[p.live[a]].Max, p.records[p.live[b]].Max) >= 0:
		return a
	}
	return b
}

// assign removes live record j from both indexes.
func (p *planner) assign(j int) {
	k := p.rank[j]
	if p.prev[k] >= 0 {
		p.next[p.prev[k]] = p.next[k]
	} else {
		p.head = p.next[k]
	}
	if p.next[k] < len(p.byAge) {
		p.prev[p.next[k]] = p.prev[k]
	}
	n := p.leaves + j
	p.tree[n] = -1
	for n /= 2; n >= 1; n /= 2 {
		p.tree[n] = p.maxChild(n)
	}
}

// grow returns s resized to n, reusing its storage.
func grow(s []int, n int) []int { return slices.Grow(s[:0], n)[:n] }

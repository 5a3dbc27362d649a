package runstore

import (
	"cmp"
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Completion: n items of a stage (expansion tasks, buckets, final blobs
// to resolve) each leave a marker row when done, and the one that
// finishes the stage must notice. Listing every marker after each item
// would cost O(n) reads per item, O(n^2) per stage. Instead the markers
// are the leaves of a tree of fan-out f (the run's Completion.Fan):
// node j of level L (L >= 1) stands for the items [j*f^L, (j+1)*f^L),
// and its marker is added once every child of it (nodes j*f to j*f+f-1
// of level L-1, as far as the level goes; the items themselves at level
// 0) has its marker. The one node of the top level is the root: its
// marker says the stage is complete.
//
// An item, once its marker is committed, climbs: it reads its siblings'
// markers (at most f rows, in a few pages that stop at the first
// sibling missing; see siblings), stops if one is missing, else adds
// its parent's marker naming itself (By) and goes on from the parent,
// unless the parent's marker names another item, which then does. So
// one completion check reads at most f rows and one more (the parent's
// marker, when another added it first) a level, for ceil(log_f n)
// levels: 7 levels of 8 for a million items, 12 for 10^10; and a few
// rows an item on average, in whatever order the items finish.
// Siblings share a partition (spread.pk groups indexes by spreadGroup,
// a multiple of f), so each read is of one partition, and a level's
// markers spread over the shards as the items do.
//
// Why 8 and not 64, which runs seeded before the settings row's version
// 5 use: items handed out together finish together (a small stage's are
// all handed to a fleet's loops at once), and an item that reads its
// siblings after they all committed finds none missing and reads the
// whole group. With groups of 64 those bursts read up to 64 rows an item
// a level, a quarter to three times more from one run to the next, and
// throttled the partitions that hold them; with 8 an item reads at most
// 8 rows a level whatever the timing, for one node marker more to write
// for about every 7 items (docs/performance.md).
//
// Linearizability makes this exact. Every marker is added once and never
// removed, and a parent's only after all its children were read present,
// so the root exists only once every item is done. Conversely, take the
// children of one node: the one whose marker was added last was added
// by an item (or is an item) that reads the siblings after that add, so
// it sees them all and adds the parent, or finds it added. Of all that
// try to add one node's marker exactly one succeeds, and the marker
// names it: that item, and no other, climbs on from there. By induction
// exactly one item adds the root and sees the stage complete. A crash
// anywhere leaves the climb to the item's redelivery, which repeats it
// from the leaves: markers naming the item let it through again, so it
// climbs as far as it had and on from there.
//
// Runs seeded before the tree (FlatCompletion) count in one level: the
// item that fills its group of 64 adds a group marker to the base
// partition and counts every group marker there, O(64 + n/64) reads an
// item and every group marker in one partition. A release never mixes
// the layouts on one run, since the run's settings say which.

// Completion is how a run's stages count their done items.
type Completion string

const (
	// TreeCompletion: a tree of node markers of fan-out 8, for every
	// run seeded since version 5 of the settings row.
	TreeCompletion Completion = "tree8"
	// WideTreeCompletion: a tree of fan-out 64, for the runs seeded
	// with versions 2 to 4.
	WideTreeCompletion Completion = "tree64"
	// FlatCompletion: one level of group markers of 64 items, all in the
	// base partition, for the runs seeded before.
	FlatCompletion Completion = "flat"
)

// orCurrent is c, or TreeCompletion when c is "": a run that names no
// completion is one seeded now.
func (c Completion) orCurrent() Completion { return cmp.Or(c, TreeCompletion) }

// Known reports whether c is a completion this release counts.
func (c Completion) Known() bool {
	return c == TreeCompletion || c == WideTreeCompletion || c == FlatCompletion
}

// Fan is the fan-out of c's tree, or the size of its flat groups.
func (c Completion) Fan() int {
	if c == TreeCompletion {
		return 8
	}
	return 64
}

// stageMarkers names a stage's marker rows: item i's marker is
// item+index(i) in partition spread.pk(i) (keys.go). In a tree, node j of
// level L's is group+level(L)+index(j) in partition spread.pk(j); in
// the flat layout, group g's is group+index(g) in the base partition.
type stageMarkers struct {
	spread
	item, group byte
	flat        bool
	fan         int    // the tree's fan-out (Completion.Fan): divides spreadGroup
	tally       *tally // what the nodes sum up (tally.go); nil: nothing
}

func markerKey(prefix byte, i int) string { return string(prefix) + formatIndex(indexWidth, i) }

// nodeKey is the marker of node j of level: the item's at level 0.
// The level is written as an index of width 1, so that the keys of no
// level are a prefix of another's.
func (m stageMarkers) nodeKey(level, j int) string {
	if level == 0 {
		return markerKey(m.item, j)
	}
	return string(m.group) + formatIndex(1, level) + formatIndex(indexWidth, j)
}

// The markers of the groups of fan items (the nodes of level
// 1 of a tree): group g's is groupPrefix()+index(g) in partition
// groupPk(g), and groupPks are every partition that holds them.
func (m stageMarkers) groupPrefix() string {
	if m.flat {
		return string(m.group)
	}
	return string(m.group) + formatIndex(1, 1)
}
func (m stageMarkers) groupKey(g int) string { return m.groupPrefix() + formatIndex(indexWidth, g) }
func (m stageMarkers) groupPk(g int) string {
	if m.flat {
		return m.base
	}
	return m.pk(g)
}
func (m stageMarkers) groupPks() []string {
	if m.flat {
		return []string{m.base}
	}
	return m.pks()
}

// allItems is the key range of every item marker.
func (m stageMarkers) allItems() (from, to string) { return string(m.item), string(m.item + 1) }

// items reads the markers of the items in span, in key order, from
// the partitions that hold them.
func (s *Store) items(ctx context.Context, m stageMarkers, span Span) ([]storage.Entity, error) {
	return queryPartitions(ctx, s.state, m.pksIn(span), markerKey(m.item, span.Lo), markerKey(m.item, span.Hi))
}

// nodes is how many nodes of the tree over n items level has.
func (m stageMarkers) nodes(n, level int) int {
	for ; level > 0; level-- {
		n = (n + m.fan - 1) / m.fan
	}
	return n
}

// itemDone reports whether the stage of n items is complete, given that
// item i's marker exists: true for the one item that completes it (and
// its redeliveries).
func (s *Store) itemDone(ctx context.Context, m stageMarkers, i, n int) (bool, error) {
	if m.flat {
		return s.flatItemDone(ctx, m, i, n)
	}
	for level, j := 1, i; ; level, j = level+1, j/m.fan {
		parent := j / m.fan
		lo, hi := parent*m.fan, min(m.nodes(n, level-1), (parent+1)*m.fan)
		es, err := s.siblings(ctx, m, level-1, lo, j, hi)
		if err != nil || es == nil {
			return false, err
		}
		if mine, err := s.claim(ctx, m, level, parent, i, m.tally.node(es)); err != nil || !mine {
			return false, err
		}
		if m.nodes(n, level) == 1 {
			return true, nil
		}
	}
}

// siblings reads the markers of nodes lo to hi-1 of level, given that
// node j's exists, and returns them in key order, or nil if one is
// missing. It reads from two places in turn, the nodes after j and
// those from lo on, a page at a time, each page twice the one before
// from m's first page, and stops at the first node missing: an item
// that finishes after its neighbours but before the group is done
// (items finish mostly in order, sometimes in reverse, often shuffled)
// finds one missing within a page or two, and only the one that
// completes the group reads it all, in a few pages. Reading every
// sibling at once reads half a group an item when items finish in
// order, and more otherwise.
func (s *Store) siblings(ctx context.Context, m stageMarkers, level, lo, j, hi int) ([]storage.Entity, error) {
	after := siblingRun{next: j + 1, to: hi, limit: m.firstPage()}
	before := siblingRun{next: lo, to: j + 1, limit: m.firstPage()}
	for after.next < after.to || before.next < before.to {
		for _, r := range []*siblingRun{&after, &before} {
			if r.next >= r.to {
				continue
			}
			if missing, err := r.page(ctx, s, m, level, m.pk(j)); err != nil || missing {
				return nil, err
			}
		}
	}
	return append(before.rows, after.rows...), nil
}

// firstSiblingPage is the rows a siblingRun asks for first in a tree of
// 64.
const firstSiblingPage = 2

// firstPage is the rows a siblingRun of m asks for first: in a tree of
// 64, firstSiblingPage, then twice as many a page; in a tree of 8, the
// whole run, at most 7 rows, since a page more is a query, billed, to
// save a few rows, which are not (a query's rows cost nothing more).
func (m stageMarkers) firstPage() int {
	if m.fan <= 8 {
		return m.fan
	}
	return firstSiblingPage
}

// siblingRun reads the markers of nodes next to to-1 of a level in
// order, a page at a time.
type siblingRun struct {
	next, to, limit int
	rows            []storage.Entity
	// cont is the token of a short page that said more may follow:
	// Azure can end a page early, even with no rows, and asking again
	// from the same row may end it there again.
	cont string
}

// page reads the run's next page from partition pk and reports whether
// it found a node missing.
func (r *siblingRun) page(ctx context.Context, s *Store, m stageMarkers, level int, pk string) (missing bool, err error) {
	want := min(r.limit, r.to-r.next)
	r.limit *= 2
	page, err := s.state(pk).Query(ctx, pk, storage.QueryOptions{From: m.nodeKey(level, r.next), To: m.nodeKey(level, r.to), Limit: want, Continuation: r.cont})
	if err != nil {
		return false, err
	}
	for _, e := range page.Entities {
		if e.RowKey != m.nodeKey(level, r.next) {
			return true, nil
		}
		r.rows = append(r.rows, e)
		r.next++
	}
	r.cont = ""
	if len(page.Entities) < want {
		if page.Next == "" {
			// A short last page: the node after the rows is missing.
			return r.next < r.to, nil
		}
		// The service's short page says nothing of what follows.
		r.cont = page.Next
	}
	return false, nil
}

// claim adds the marker of node j of level for item i, with the
// tally's props, and reports whether it names i: added now, or by an
// earlier delivery of i.
func (s *Store) claim(ctx context.Context, m stageMarkers, level, j, i int, props map[string]any) (bool, error) {
	if props == nil {
		props = map[string]any{}
	}
	props["By"] = int64(i)
	e := storage.Entity{PartitionKey: m.pk(j), RowKey: m.nodeKey(level, j), Props: props}
	added, err := addOnce(ctx, s.state, e)
	if err == nil && !added {
		e, err = s.state(e.PartitionKey).Get(ctx, e.PartitionKey, e.RowKey)
		if err == nil {
			d := decode(e, nil)
			added = d.int("By") == int64(i)
			err = d.done("completion marker " + e.RowKey)
		}
	}
	if err != nil {
		return false, fmt.Errorf("marking node %d of level %d of %s complete: %w", j, level, m.base, err)
	}
	return added, nil
}

// allDone reports whether all n items are done, by the root's marker
// (or, flat, every group marker).
func (s *Store) allDone(ctx context.Context, m stageMarkers, n int) (bool, error) {
	if m.flat {
		return s.flatAllDone(ctx, m, n)
	}
	if n == 0 {
		return true, nil
	}
	return exists(ctx, s.state, m.pk(0), m.nodeKey(m.rootLevel(n), 0))
}

// rootLevel is the level of the root of the tree over n items: the
// lowest above the items with one node.
func (m stageMarkers) rootLevel(n int) int {
	level := 1
	for m.nodes(n, level) > 1 {
		level++
	}
	return level
}

// groups is how many groups of fan items n items make.
func (m stageMarkers) groups(n int) int { return m.nodes(n, 1) }

// flatItemDone is itemDone of the flat layout.
func (s *Store) flatItemDone(ctx context.Context, m stageMarkers, i, n int) (bool, error) {
	g := i / m.fan
	lo, hi := g*m.fan, min(n, (g+1)*m.fan)
	es, err := queryAll(ctx, s.state, m.pk(i), markerKey(m.item, lo), markerKey(m.item, hi))
	if err != nil || len(es) < hi-lo {
		return false, err
	}
	if _, err := addOnce(ctx, s.state, storage.Entity{PartitionKey: m.groupPk(g), RowKey: m.groupKey(g), Props: map[string]any{}}); err != nil {
		return false, fmt.Errorf("marking group %d of %s complete: %w", g, m.base, err)
	}
	return s.flatAllDone(ctx, m, n)
}

// flatAllDone is allDone of the flat layout: it reads every group marker.
func (s *Store) flatAllDone(ctx context.Context, m stageMarkers, n int) (bool, error) {
	if n == 0 {
		return true, nil
	}
	es, err := queryAll(ctx, s.state, m.base, m.groupKey(0), m.groupKey(m.groups(n)))
	return err == nil && len(es) >= m.groups(n), err
}

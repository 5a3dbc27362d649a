package runstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Stage is one of a ply's four stages of work. Each is cut into items,
// each item is done by one task, and each task commits one marker row
// when its item is done:
//
//	stage       item             items          marker       worked while the ply is
//	expansion   expansion task   Tasks          Expansion    Expanding
//	combine     combine task     Groups*Ranges  Combine      Merging
//	merge       bucket           Buckets        BucketMerge  Merging
//	resolution  final blob       Finals         Resolution   Final, Dispatched, Resolved, Closed
//
// A Stage is the one owner of its items' done markers, their commit and
// the stage's completion; task.Do carries the handler sequence around it.
// Invariants:
//   - an item is done exactly when its marker exists;
//   - a marker is added once and never changed or deleted (Commit): of
//     two attempts of one item, the first marker wins, and whatever the
//     other attempt wrote is no record's;
//   - whatever a marker names is written before it, so a marker never
//     names what is missing;
//   - the stage is complete once every item's marker exists, and the
//     task whose marker completes it sees that (AllDone; completion.go).
//
// A Stage is made from a ply record as read (ExpansionStage and the
// others); Check judges that record, the other methods read the rows.
type Stage[M any] struct {
	store *Store
	ply   *Ply
	kind  *stageKind[M]
}

// stageKind is what tells one stage from another: how many items it has,
// when they are worked on, where their markers lie and how they are
// encoded.
type stageKind[M any] struct {
	item     string // what an item is, in errors: "expansion task"
	items    func(p *Ply) int
	from, to State // the ply's states in which items are worked on
	// early says why no item is worked on before from; missing why the
	// ply has no item i.
	early   func(p *Ply) string
	missing func(p *Ply, i int) string
	rows    func(s *Store, ply int) stageMarkers
	index   func(m M) int
	encode  func(m M) (map[string]any, error)
	decode  func(d *decoder, i int) M
	// ahead, when set, writes what the marker commits besides itself,
	// before it; lost then cleans up after an attempt whose marker lost.
	ahead func(ctx context.Context, st Stage[M], m M) error
	lost  func(ctx context.Context, st Stage[M], m M) error
}

func newStage[M any](s *Store, p *Ply, k *stageKind[M]) Stage[M] {
	return Stage[M]{store: s, ply: p, kind: k}
}

// Ply is the ply record the stage was made from.
func (st Stage[M]) Ply() *Ply { return st.ply }

// Items is how many items the stage has.
func (st Stage[M]) Items() int { return st.kind.items(st.ply) }

// Check says whether item i is worked on now, by the ply record: past
// is true once the ply has moved beyond the stage, so that a message
// for the item is a stale duplicate; err says why the item is never
// worked on: the ply has not reached the stage, or has no item i.
func (st Stage[M]) Check(i int) (past bool, err error) {
	p := st.ply
	switch {
	case p.State < st.kind.from:
		return false, errors.New(st.kind.early(p))
	case i < 0 || i >= st.Items():
		return false, errors.New(st.kind.missing(p, i))
	case p.State > st.kind.to:
		return true, nil
	}
	return false, nil
}

// Done reports whether item i is done: its marker exists.
func (st Stage[M]) Done(ctx context.Context, i int) (bool, error) {
	rows := st.rows()
	return exists(ctx, st.store.state, rows.pk(i), markerKey(rows.item, i))
}

// AllDone reports whether every item is done, given that item given is
// (see completion.go): the task that committed given calls it, so that
// the task that completes the stage sees it complete.
func (st Stage[M]) AllDone(ctx context.Context, given int) (bool, error) {
	return st.store.itemDone(ctx, st.rows(), given, st.Items())
}

// Complete reports whether every item is done, from the completion
// markers alone (the root's; completion.go), for a caller that
// committed no item.
func (st Stage[M]) Complete(ctx context.Context) (bool, error) {
	return st.store.allDone(ctx, st.rows(), st.Items())
}

// progressWindow is how many group markers past the frontier Progress
// reads: one page of a query.
const progressWindow = 1000

// Progress estimates how many of the stage's items are done, for people
// watching the run (a progress line every few seconds), from a bounded
// read whatever the stage's size: where the group markers (see
// completion.go) stop, by bisection (O(log n) point reads); the group
// markers of one page past there, since items finish about in order;
// and the item markers of the first group not complete. It is exact when
// the groups complete in order, as a queue hands out their items, and
// every item is done; otherwise groups that a later one passed count
// done, and items of incomplete groups past the first do not.
func (st Stage[M]) Progress(ctx context.Context) (int, error) {
	rows, n := st.rows(), st.Items()
	g := groups(n)
	size := func(k int) int { return min(n, (k+1)*completionFan) - k*completionFan }
	// Invariant: group lo is complete (or lo is -1), hi is not (or is g).
	lo, hi := -1, g
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := exists(ctx, st.store.state, rows.groupPk(mid), rows.groupKey(mid))
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	if hi == g {
		return n, nil
	}
	done := hi * completionFan
	// A window of groups lies in one partition, or spread over the
	// shards (a tree's): it is one page in all.
	for _, pk := range rows.groupPks() {
		past, err := st.store.state(pk).Query(ctx, pk, storage.QueryOptions{
			From: rows.groupKey(hi + 1), To: rows.groupKey(min(g, hi+1+progressWindow)), Limit: progressWindow})
		if err != nil {
			return 0, fmt.Errorf("reading the %s group markers of ply %d: %w", st.kind.item, st.ply.Ply, err)
		}
		for _, e := range past.Entities {
			d := decode(e, nil)
			if k := d.keyIndex(rows.groupPrefix()); d.err == nil && k < g {
				done += size(k)
			}
		}
	}
	first := hi * completionFan
	items, err := queryAll(ctx, st.store.state, rows.pk(first), markerKey(rows.item, first), markerKey(rows.item, first+size(hi)))
	if err != nil {
		return 0, fmt.Errorf("reading the %s markers of ply %d: %w", st.kind.item, st.ply.Ply, err)
	}
	return done + len(items), nil
}

// Commit commits item m's marker once, after what the stage commits
// with it (a merge's outputs). won is false when another attempt's
// marker was there first: m is then no record's, and the blobs it names
// are left to their compensation messages.
func (st Stage[M]) Commit(ctx context.Context, m M) (won bool, err error) {
	i := st.kind.index(m)
	what := fmt.Sprintf("%s %d of ply %d", st.kind.item, i, st.ply.Ply)
	props, err := st.kind.encode(m)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	if st.kind.ahead != nil {
		if err := st.kind.ahead(ctx, st, m); err != nil {
			return false, fmt.Errorf("writing what %s commits: %w", what, err)
		}
	}
	rows := st.rows()
	won, err = addOnce(ctx, st.store.state, storage.Entity{PartitionKey: rows.pk(i), RowKey: markerKey(rows.item, i), Props: props})
	if err != nil {
		return false, fmt.Errorf("committing %s: %w", what, err)
	}
	if !won && st.kind.lost != nil {
		// Leftovers of a lost attempt are never read (ahead's rows count
		// only under their own attempt's marker): cleaning up may fail.
		_ = st.kind.lost(ctx, st, m)
	}
	return won, nil
}

// Markers reads the marker of every done item, in item order.
func (st Stage[M]) Markers(ctx context.Context) ([]M, error) {
	from, to := st.rows().allItems()
	return markers(ctx, st.store, st.kind, st.ply.Ply, from, to)
}

// MarkersIn reads the markers of the done items in span, in item order.
func (st Stage[M]) MarkersIn(ctx context.Context, span Span) ([]M, error) {
	rows := st.rows()
	return markers(ctx, st.store, st.kind, st.ply.Ply, markerKey(rows.item, span.Lo), markerKey(rows.item, span.Hi))
}

// MarkersAt reads the markers of the done items among items, one point
// read each, in the order given: for a reader that needs a few items
// spread over the stage (one combine task of each group), where a range
// query would return every item between them.
func (st Stage[M]) MarkersAt(ctx context.Context, items []int) ([]M, error) {
	rows := st.rows()
	var out []M
	for _, i := range items {
		rk := markerKey(rows.item, i)
		e, err := st.store.state(rows.pk(i)).Get(ctx, rows.pk(i), rk)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s %d of ply %d: %w", st.kind.item, i, st.ply.Ply, err)
		}
		m, err := decodeMarker(st.store, st.kind, rows, e)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Undone lists the items that none of markers (as Markers read them)
// names, in order; markers of items the stage lacks are ignored.
func (st Stage[M]) Undone(markers []M) []int {
	done := make([]bool, st.Items())
	for _, m := range markers {
		if i := st.kind.index(m); i >= 0 && i < len(done) {
			done[i] = true
		}
	}
	var out []int
	for i, d := range done {
		if !d {
			out = append(out, i)
		}
	}
	return out
}

// MarkerOf reports whether e is the marker row of one of the stage's
// items, and whose: for tools and tests that watch the table traffic
// and must not know the row layout.
func (st Stage[M]) MarkerOf(e storage.Entity) (item int, ok bool) {
	rows := st.rows()
	for _, pk := range rows.pks() {
		if e.PartitionKey != pk {
			continue
		}
		d := decode(e, nil)
		i := d.keyIndex(string(rows.item))
		return i, d.err == nil && rows.pk(i) == pk
	}
	return 0, false
}

func (st Stage[M]) rows() stageMarkers { return st.kind.rows(st.store, st.ply.Ply) }

// markers reads and decodes the markers of kind k on ply in the
// row-key range [from, to).
func markers[M any](ctx context.Context, s *Store, k *stageKind[M], ply int, from, to string) ([]M, error) {
	rows := k.rows(s, ply)
	es, err := s.items(ctx, rows, from, to)
	if err != nil {
		return nil, fmt.Errorf("reading the %s markers of ply %d: %w", k.item, ply, err)
	}
	out := make([]M, len(es))
	for i, e := range es {
		if out[i], err = decodeMarker(s, k, rows, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeMarker decodes marker row e of kind k.
func decodeMarker[M any](s *Store, k *stageKind[M], rows stageMarkers, e storage.Entity) (M, error) {
	d := decode(e, s.board)
	m := k.decode(d, d.keyIndex(string(rows.item)))
	return m, d.done(k.item + " marker " + e.RowKey)
}

package runstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	// attempt, when set, is the tag of the attempt whose blobs m names,
	// each covered by a compensation message until m is committed; empty
	// when m names none.
	attempt func(m M) string
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

// Since is the state from which the stage's items are worked on, the
// state a reader of the ply's record for them asks for (Store.PlySince).
func (st Stage[M]) Since() State { return st.kind.from }

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

// Progress estimates how many of the stage's items are done, for people
// watching the run (a progress line every few seconds), from a read
// bounded whatever the stage's size (see completion.go): in a tree, the
// root's marker, then from the top down the children of the first node
// not complete, at most a fan-out of rows a level (O(log n) in all);
// flat, where the group markers stop, by bisection (O(log n) point
// reads), a page of group markers past there and the first incomplete
// group's items. It is exact when the stage is complete and when its
// items complete in order, as a queue hands them out; otherwise items
// of incomplete nodes past the first of their level are not counted
// (and, flat, groups before the one found that are not complete are),
// but in a tree the share done of a span of items in each part of the
// stage past the first incomplete one (sampledPast) bounds the count
// from below: items done at random, or as the front a sharded queue
// makes, are then counted within a few percent of the stage.
func (st Stage[M]) Progress(ctx context.Context) (int, error) {
	rows, n := st.rows(), st.Items()
	var done int
	var err error
	if rows.flat {
		done, err = st.store.flatProgress(ctx, rows, n)
	} else {
		done, err = st.store.treeProgress(ctx, rows, n)
	}
	if err != nil {
		return 0, fmt.Errorf("reading the progress of the %s markers of ply %d: %w", st.kind.item, st.ply.Ply, err)
	}
	return done, nil
}

// treeProgress is Progress on a tree of completion markers.
func (s *Store) treeProgress(ctx context.Context, m stageMarkers, n int) (int, error) {
	if n == 0 {
		return 0, nil
	}
	level, width := 0, 1 // the top level, and the items a node of it stands for
	for m.nodes(n, level) > 1 {
		level, width = level+1, width*m.fan
	}
	if complete, err := exists(ctx, s.state, m.pk(0), m.nodeKey(level, 0)); err != nil || complete {
		return n, err
	}
	// Node j of level is not complete: count its children that are, and
	// go down to the first that is not.
	done, j := 0, 0
	for level > 0 {
		level, width = level-1, width/m.fan
		lo, hi := j*m.fan, min(m.nodes(n, level), (j+1)*m.fan)
		es, err := queryAll(ctx, s.state, m.pk(lo), m.nodeKey(level, lo), m.nodeKey(level, hi))
		if err != nil {
			return 0, err
		}
		prefix := strings.TrimSuffix(m.nodeKey(level, 0), formatIndex(indexWidth, 0))
		j = lo
		for _, e := range es {
			d := decode(e, nil)
			k := d.keyIndex(prefix)
			if err := d.done("completion marker " + e.RowKey); err != nil {
				return 0, err
			}
			done += min(n, (k+1)*width) - k*width
			if k == j {
				j++ // the first not complete is past k
			}
		}
	}
	// Items done out of order (work from a sharded queue) leave most
	// nodes incomplete, which count nothing above: a stage of 27,000
	// items read 0 until nearly done. Every item before j is done; a
	// span of items in each part of the stage past j gives the share
	// done there (none when items are done in order, where the count
	// above is exact). A span is spreadGroup items, one query of one
	// partition whatever the tree's fan-out.
	past, err := s.sampledPast(ctx, m, n, j)
	if err != nil {
		return 0, err
	}
	return max(done, min(n-1, j+past)), nil // not n: the root said the stage is not complete
}

// progressSamples is how many parts of a stage Progress samples, a span
// of items each: where the items done form a front (queue order), the
// count is off by half a part at most, a sixteenth of the stage; where
// they are done at random, by about 2% of it (a span's share of 64
// items, over 8 parts).
const progressSamples = 8

// sampledPast estimates how many of the items from first to n are done:
// the stage's items are cut into progressSamples parts, fixed, and each
// part's items past first are counted at the share done of one span of
// spreadGroup items in their middle. A span is read only while its part
// has items past first.
//
// Why fixed parts and spans that follow first: parts cut from first, or
// spans at fixed places, counted a span below first as a part of the
// rest, or dropped it once first passed it, and the estimate fell by a
// tenth of the stage (a sawtooth over a stage done as a front).
func (s *Store) sampledPast(ctx context.Context, m stageMarkers, n, first int) (int, error) {
	groups := (n + spreadGroup - 1) / spreadGroup
	est := 0
	for i := range progressSamples {
		lo, hi := max(first, i*groups/progressSamples*spreadGroup), min(n, (i+1)*groups/progressSamples*spreadGroup)
		if lo >= hi {
			continue
		}
		g := (lo/spreadGroup + (hi-1)/spreadGroup) / 2
		from, to := max(lo, g*spreadGroup), min(hi, (g+1)*spreadGroup)
		es, err := queryAll(ctx, s.state, m.pk(from), m.nodeKey(0, from), m.nodeKey(0, to))
		if err != nil {
			return 0, err
		}
		est += len(es) * (hi - lo) / (to - from)
	}
	return est, nil
}

// progressWindow is how many group markers past where they stop
// flatProgress reads: one page of a query.
const progressWindow = 1000

// flatProgress is Progress on flat completion markers.
func (s *Store) flatProgress(ctx context.Context, m stageMarkers, n int) (int, error) {
	g := m.groups(n)
	size := func(k int) int { return min(n, (k+1)*m.fan) - k*m.fan }
	// Invariant: group lo is complete (or lo is -1), hi is not (or is g).
	lo, hi := -1, g
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := exists(ctx, s.state, m.base, markerKey(m.group, mid))
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
	done := hi * m.fan
	past, err := s.state(m.base).Query(ctx, m.base, storage.QueryOptions{
		From: markerKey(m.group, hi+1), To: markerKey(m.group, min(g, hi+1+progressWindow)), Limit: progressWindow})
	if err != nil {
		return 0, err
	}
	for _, e := range past.Entities {
		d := decode(e, nil)
		if k := d.keyIndex(string(m.group)); d.err == nil && k < g {
			done += size(k)
		}
	}
	first := hi * m.fan
	items, err := queryAll(ctx, s.state, m.pk(first), markerKey(m.item, first), markerKey(m.item, first+size(hi)))
	if err != nil {
		return 0, err
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
	won, err = st.add(ctx, i, m, props)
	if err != nil && !errors.Is(err, ErrFenced) {
		return false, fmt.Errorf("committing %s: %w", what, err)
	}
	if !won && st.kind.lost != nil {
		// Leftovers of a lost attempt are never read (ahead's rows count
		// only under their own attempt's marker): cleaning up may fail.
		_ = st.kind.lost(ctx, st, m)
	}
	if err != nil {
		return false, fmt.Errorf("committing %s: %w", what, err)
	}
	return won, nil
}

// ErrFenced: a commit found its attempt fenced by a compensation message
// that surfaced first and may have deleted the blobs the marker would
// name. The attempt is over; a redelivery does the item again.
var ErrFenced = errors.New("runstore: a compensation message surfaced before the commit; its blobs may be gone")

// add adds item i's marker once. The marker of an attempt whose blobs
// compensation messages cover goes in one transaction with the
// attempt's fence (stageMarkers.fence): of the commit and a compensation
// message that surfaces, whichever adds the fence first wins, so a
// marker can never name a blob that its message deleted, however long
// the commit took to land (retries under throttling included).
func (st Stage[M]) add(ctx context.Context, i int, m M, props map[string]any) (won bool, err error) {
	rows := st.rows()
	pk := rows.pk(i)
	marker := storage.Entity{PartitionKey: pk, RowKey: markerKey(rows.item, i), Props: props}
	attempt := ""
	if st.kind.attempt != nil {
		attempt = st.kind.attempt(m)
	}
	if attempt == "" {
		return addOnce(ctx, st.store.state, marker)
	}
	fence := storage.Entity{PartitionKey: pk, RowKey: rows.fence(i, attempt), Props: map[string]any{}}
	_, err = st.store.state(pk).Transact(ctx, pk, []storage.Op{{Kind: storage.OpAdd, Entity: marker}, {Kind: storage.OpAdd, Entity: fence}})
	if !errors.Is(err, storage.ErrExists) {
		return err == nil, err
	}
	// The marker was there (another attempt's, or this one's, whose
	// answer a retry lost), or only the fence: a compensation message's.
	done, err := exists(ctx, st.store.state, pk, marker.RowKey)
	switch {
	case err != nil:
		return false, err
	case done:
		return false, nil
	}
	return false, ErrFenced
}

// Markers reads the marker of every done item, in item order.
func (st Stage[M]) Markers(ctx context.Context) ([]M, error) {
	return st.MarkersIn(ctx, Span{0, st.Items()})
}

// MarkersIn reads the markers of the done items in span, in item order.
func (st Stage[M]) MarkersIn(ctx context.Context, span Span) ([]M, error) {
	return markers(ctx, st.store, st.kind, st.ply.Ply, span)
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

// UndoneIn lists the items of span that are not done, in order, from
// the markers of span alone (one query of each partition that holds
// them); items the stage lacks are left out.
func (st Stage[M]) UndoneIn(ctx context.Context, span Span) ([]int, error) {
	span = Span{max(span.Lo, 0), min(span.Hi, st.Items())}
	if span.Lo >= span.Hi {
		return nil, nil
	}
	markers, err := st.MarkersIn(ctx, span)
	if err != nil {
		return nil, err
	}
	done := make([]bool, span.Hi-span.Lo)
	for _, m := range markers {
		if i := st.kind.index(m) - span.Lo; i >= 0 && i < len(done) {
			done[i] = true
		}
	}
	var out []int
	for i, d := range done {
		if !d {
			out = append(out, span.Lo+i)
		}
	}
	return out, nil
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

// markers reads and decodes the markers of kind k on ply of the items
// in span.
func markers[M any](ctx context.Context, s *Store, k *stageKind[M], ply int, span Span) ([]M, error) {
	rows := k.rows(s, ply)
	es, err := s.items(ctx, rows, span)
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

package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Completion: n items of a stage (expansion tasks, buckets, final blobs
// to resolve) each leave a marker row when done, and the one that
// finishes the stage must notice. Listing every marker after each item
// would cost O(n) reads per item, O(n^2) per stage. Instead markers are
// counted in groups of completionFan: the item that fills its group adds
// a group marker, and only then are the group markers counted, so an item
// costs O(completionFan + n/completionFan) reads.
//
// Linearizability makes this exact: of two items that finish together,
// the one whose count comes second sees the other's marker, so the last
// item of a group always sees the group full, and likewise for groups.
// Markers are only ever added, so a redelivery repeats the count safely.
const completionFan = 64

// stageMarkers names a stage's marker rows: item i's marker is
// item+index(i) in partition spread.pk(i), group g's is group+index(g) in
// the base partition, where the last item counts them all.
type stageMarkers struct {
	spread
	item, group byte
}

func markerKey(prefix byte, i int) string { return string(prefix) + formatIndex(indexWidth, i) }

// allItems is the key range of every item marker.
func (m stageMarkers) allItems() (from, to string) { return string(m.item), string(m.item + 1) }

// items reads the item markers in [from, to) of every partition, in
// key order.
func (s *Store) items(ctx context.Context, m stageMarkers, from, to string) ([]storage.Entity, error) {
	return queryPartitions(ctx, s.state, m.pks(), from, to)
}

func groups(n int) int { return (n + completionFan - 1) / completionFan }

// itemDone reports whether all n items are done, given that item i's
// marker exists.
func (s *Store) itemDone(ctx context.Context, m stageMarkers, i, n int) (bool, error) {
	g := i / completionFan
	lo, hi := g*completionFan, min(n, (g+1)*completionFan)
	es, err := queryAll(ctx, s.state, m.pk(i), markerKey(m.item, lo), markerKey(m.item, hi))
	if err != nil || len(es) < hi-lo {
		return false, err
	}
	if _, err := addOnce(ctx, s.state, storage.Entity{PartitionKey: m.base, RowKey: markerKey(m.group, g), Props: map[string]any{}}); err != nil {
		return false, fmt.Errorf("marking group %d of %s complete: %w", g, m.base, err)
	}
	return s.allDone(ctx, m, n)
}

// allDone reports whether all n items are done, by their group markers.
func (s *Store) allDone(ctx context.Context, m stageMarkers, n int) (bool, error) {
	if n == 0 {
		return true, nil
	}
	es, err := queryAll(ctx, s.state, m.base, markerKey(m.group, 0), markerKey(m.group, groups(n)))
	return err == nil && len(es) >= groups(n), err
}

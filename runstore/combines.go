package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Combine is the marker a combine task commits once its run is written:
// its presence says the task is done and where its edges are. Combine
// task i of a ply with a combine level merges group i/Ranges's segments
// of range i%Ranges (see Sizes.Levels).
//
// Invariant: Blob holds the group's edges of the range sorted, cut at
// the ply's splitters: the range's k-th bucket is Cuts.Segment(k) of
// Blob, so len(Cuts) is the range's bucket count plus one
// (or 0 when the group had no edges in the range and no blob was
// written).
type Combine struct {
	Index    int
	Attempt  string
	Blob     string
	Cuts     Cuts
	Segments int64 // expansion segments read
	Entries  int64 // entries written
}

// AddCombine commits combine task c.Index's marker once. committed is
// false when an earlier attempt's marker was there first: c.Blob is then
// no record's, and its compensation message deletes it.
func (s *Store) AddCombine(ctx context.Context, ply int, c Combine) (committed bool, err error) {
	if len(c.Cuts) > MaxBuckets+1 {
		return false, fmt.Errorf("combine task %d of ply %d: %d buckets, at most %d", c.Index, ply, len(c.Cuts)-1, MaxBuckets)
	}
	m := s.combineMarkers(ply)
	row := storage.Entity{PartitionKey: m.pk(c.Index), RowKey: markerKey(m.item, c.Index), Props: map[string]any{
		"Attempt": c.Attempt, "Blob": c.Blob, "Cuts": encodeCuts(c.Cuts), "Segments": c.Segments, "Entries": c.Entries,
	}}
	committed, err = addOnce(ctx, s.state, row)
	if err != nil {
		return false, fmt.Errorf("recording combine task %d of ply %d: %w", c.Index, ply, err)
	}
	return committed, nil
}

// CombineDone reports whether combine task i of a ply is done.
func (s *Store) CombineDone(ctx context.Context, ply, i int) (bool, error) {
	m := s.combineMarkers(ply)
	return exists(ctx, s.state, m.pk(i), markerKey(m.item, i))
}

// AllCombined reports whether every combine task of a ply is done, given
// that task i is (see completion.go).
func (s *Store) AllCombined(ctx context.Context, p *Ply, i int) (bool, error) {
	return s.itemDone(ctx, s.combineMarkers(p.Ply), i, p.Groups*p.Ranges)
}

// Combines reads the markers of a ply's combine tasks, in task order.
func (s *Store) Combines(ctx context.Context, ply int) ([]Combine, error) {
	m := s.combineMarkers(ply)
	from, to := m.allItems()
	es, err := s.items(ctx, m, from, to)
	if err != nil {
		return nil, fmt.Errorf("reading the combine markers of ply %d: %w", ply, err)
	}
	out := make([]Combine, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = Combine{Index: d.keyIndex(string(m.item)), Attempt: d.str("Attempt"), Blob: d.str("Blob"), Cuts: d.cuts("Cuts"),
			Segments: d.int("Segments"), Entries: d.int("Entries")}
		if err := d.done("combine marker " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package runstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// MaxBuckets bounds a ply's buckets, so that an expansion marker's cuts
// (at most 5 bytes per bucket) fit one binary property of 64 KiB.
const MaxBuckets = 8192

// Expansion is the marker an expansion task commits once its blob is
// written; its presence says the task is done and where its edges are.
//
// Invariant: Blob holds the task's edges sorted, cut at the ply's
// splitters: bucket b's edges are Cuts.Segment(b) of Blob, so
// len(Cuts) is the ply's bucket count plus one (or 0 when the task found
// no edges and wrote no blob).
type Expansion struct {
	Task     int
	Blob     string
	Cuts     Cuts
	Parents  int64 // positions expanded
	Terminal int64 // of which terminal
	Edges    int64 // moves found
	Entries  int64 // entries written (distinct children per parent)
}

// Cuts are where each bucket starts in a run of edges cut into buckets
// (an expansion or a combine task's blob), then where the last ends.
type Cuts []int64

// Segment is where bucket b of the cuts lies; n is 0 when it holds
// nothing or the cuts have no bucket b.
func (c Cuts) Segment(b int) (off, n int64) {
	if b < 0 || b+1 >= len(c) {
		return 0, 0
	}
	return c[b], c[b+1] - c[b]
}

func encodeCuts(cuts Cuts) []byte {
	out := make([]byte, 0, 2*len(cuts))
	var prev int64
	for _, c := range cuts {
		out = binary.AppendUvarint(out, uint64(c-prev))
		prev = c
	}
	return out
}

func decodeCuts(b []byte) (Cuts, error) {
	var out Cuts
	var at int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || d > 1<<40 {
			return nil, errors.New("malformed cuts")
		}
		at += int64(d)
		out = append(out, at)
		b = b[n:]
	}
	return out, nil
}

// AddExpansion commits expansion task e.Task's marker once. committed is
// false when an earlier attempt's marker was there first: e.Blob is then
// no record's, and its compensation message deletes it.
func (s *Store) AddExpansion(ctx context.Context, ply int, e Expansion) (committed bool, err error) {
	if len(e.Cuts) > MaxBuckets+1 {
		return false, fmt.Errorf("expansion task %d of ply %d: %d buckets, at most %d", e.Task, ply, len(e.Cuts)-1, MaxBuckets)
	}
	row := storage.Entity{PartitionKey: s.expansionMarkers(ply).pk(e.Task), RowKey: rkExpansion(e.Task), Props: map[string]any{
		"Blob": e.Blob, "Cuts": encodeCuts(e.Cuts),
		"Parents": e.Parents, "Terminal": e.Terminal, "Edges": e.Edges, "Entries": e.Entries,
	}}
	committed, err = addOnce(ctx, s.state, row)
	if err != nil {
		return false, fmt.Errorf("recording expansion task %d of ply %d: %w", e.Task, ply, err)
	}
	return committed, nil
}

// ExpansionDone reports whether expansion task task of a ply is done.
func (s *Store) ExpansionDone(ctx context.Context, ply, task int) (bool, error) {
	return exists(ctx, s.state, s.expansionMarkers(ply).pk(task), rkExpansion(task))
}

// AllExpanded reports whether all tasks of a ply's expansion are done,
// given that task is (see completion.go).
func (s *Store) AllExpanded(ctx context.Context, ply, task, tasks int) (bool, error) {
	return s.itemDone(ctx, s.expansionMarkers(ply), task, tasks)
}

// Expansions reads the markers of a ply's expansion tasks.
func (s *Store) Expansions(ctx context.Context, ply int) ([]Expansion, error) {
	from, to := s.expansionMarkers(ply).allItems()
	return s.expansions(ctx, ply, from, to)
}

// ExpansionsOf reads the markers of a ply's expansion tasks in span.
func (s *Store) ExpansionsOf(ctx context.Context, ply int, span Span) ([]Expansion, error) {
	m := s.expansionMarkers(ply)
	return s.expansions(ctx, ply, markerKey(m.item, span.Lo), markerKey(m.item, span.Hi))
}

func (s *Store) expansions(ctx context.Context, ply int, from, to string) ([]Expansion, error) {
	m := s.expansionMarkers(ply)
	es, err := s.items(ctx, m, from, to)
	if err != nil {
		return nil, fmt.Errorf("reading the expansion markers of ply %d: %w", ply, err)
	}
	out := make([]Expansion, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = Expansion{Task: d.keyIndex(string(m.item)), Blob: d.str("Blob"), Cuts: d.cuts("Cuts"),
			Parents: d.int("Parents"), Terminal: d.int("Terminal"), Edges: d.int("Edges"), Entries: d.int("Entries")}
		if err := d.done("expansion marker " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package runstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Expansion is the marker an expansion task commits with its last batch
// of runs; its presence says the task is done.
type Expansion struct {
	Task     int
	Parents  int64 // positions expanded
	Terminal int64 // of which terminal
	Edges    int64 // moves found
	Entries  int64 // entries written (distinct children per parent)
}

// segmentsPerBatch leaves room in a transaction for the batch marker and
// the done marker.
const segmentsPerBatch = storage.MaxBatchOps - 2

// AddSegments registers expansion task task's runs for a ply, in batches
// of one transaction each. Every batch holds a marker row of its own, so
// a batch that an earlier attempt committed fails whole with ErrExists
// and is skipped: runs are never added twice, even after a merge consumed
// them. The last batch holds the done marker. It reports whether this
// call committed any batch.
func (s *Store) AddSegments(ctx context.Context, ply int, runs []*Run, done Expansion) (committed bool, err error) {
	pk := pkRuns(ply)
	for b := 0; b == 0 || b*segmentsPerBatch < len(runs); b++ {
		batch := runs[b*segmentsPerBatch : min(len(runs), (b+1)*segmentsPerBatch)]
		ops := []storage.Op{{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pk, RowKey: rkBatch(done.Task, b), Props: map[string]any{}}}}
		for _, r := range batch {
			r.Key = rkSegment(r.Bucket, done.Task)
			ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: r.entity(ply)})
		}
		if (b+1)*segmentsPerBatch >= len(runs) {
			ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pk, RowKey: rkExpansion(done.Task), Props: map[string]any{
				"Parents": done.Parents, "Terminal": done.Terminal, "Edges": done.Edges, "Entries": done.Entries,
			}}})
		}
		if _, err := s.state.Transact(ctx, pk, ops); err != nil {
			var te *storage.TxError
			if errors.As(err, &te) && errors.Is(err, storage.ErrExists) {
				continue // an earlier attempt committed this batch
			}
			return committed, fmt.Errorf("registering expansion runs of ply %d: %w", ply, err)
		}
		committed = true
	}
	return committed, nil
}

// ExpansionDone reports whether expansion task task of a ply is done.
func (s *Store) ExpansionDone(ctx context.Context, ply, task int) (bool, error) {
	return exists(ctx, s.state, pkRuns(ply), rkExpansion(task))
}

// AllExpanded reports whether all tasks of a ply's expansion are done,
// given that task is (see completion.go).
func (s *Store) AllExpanded(ctx context.Context, ply, task, tasks int) (bool, error) {
	return s.itemDone(ctx, expansionMarkers(ply), task, tasks)
}

// Expansions reads the done markers of a ply's expansion tasks.
func (s *Store) Expansions(ctx context.Context, ply int) ([]Expansion, error) {
	es, err := queryAll(ctx, s.state, pkRuns(ply), doneFrom, doneTo)
	if err != nil {
		return nil, err
	}
	out := make([]Expansion, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = Expansion{Task: d.keyIndex("d"), Parents: d.int("Parents"), Terminal: d.int("Terminal"), Edges: d.int("Edges"), Entries: d.int("Entries")}
		if err := d.done("expansion marker " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SetBuckets records, once, how many buckets a ply has, and marks the
// buckets that hold no run complete at once, so that completion counts
// every bucket (see completion.go). holding says which buckets hold runs.
// The row that records the count is added last, so its presence says the
// empty buckets are marked.
func (s *Store) SetBuckets(ctx context.Context, ply, total int, holding map[int]bool) error {
	pk := pkRuns(ply)
	if ok, err := exists(ctx, s.state, pk, rkBuckets); err != nil || ok {
		return err
	}
	var ops []storage.Op
	m := bucketMarkers(ply)
	for g := 0; g < groups(total); g++ {
		empty := true
		for b := g * completionFan; b < min(total, (g+1)*completionFan); b++ {
			if holding[b] {
				empty = false
				continue
			}
			ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: markerKey(m.item, b), Props: map[string]any{}}})
		}
		if empty {
			ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: markerKey(m.group, g), Props: map[string]any{}}})
		}
	}
	if err := transactAll(ctx, s.state, pk, ops); err != nil {
		return fmt.Errorf("marking the empty buckets of ply %d: %w", ply, err)
	}
	err := addOnce(ctx, s.state, storage.Entity{PartitionKey: pk, RowKey: rkBuckets, Props: map[string]any{"Buckets": int64(total)}})
	if err != nil {
		return fmt.Errorf("counting the buckets of ply %d: %w", ply, err)
	}
	return nil
}

// BucketCount reads how many buckets a ply has.
func (s *Store) BucketCount(ctx context.Context, ply int) (int, error) {
	e, err := s.state.Get(ctx, pkRuns(ply), rkBuckets)
	if err != nil {
		return 0, fmt.Errorf("reading the bucket count of ply %d: %w", ply, err)
	}
	d := decode(e, nil)
	n := d.count("Buckets")
	return n, d.done("bucket count")
}

// MarkBucketComplete records that a bucket has nothing left to merge and
// reports whether every bucket of the ply is complete. A complete bucket
// never changes again, so marking it twice is harmless.
func (s *Store) MarkBucketComplete(ctx context.Context, ply, bucket int) (all bool, err error) {
	pk := pkRuns(ply)
	if err := addOnce(ctx, s.state, storage.Entity{PartitionKey: pk, RowKey: rkBucketDone(bucket), Props: map[string]any{}}); err != nil {
		return false, fmt.Errorf("marking bucket %d of ply %d complete: %w", bucket, ply, err)
	}
	total, err := s.BucketCount(ctx, ply)
	if err != nil {
		return false, err
	}
	return s.itemDone(ctx, bucketMarkers(ply), bucket, total)
}

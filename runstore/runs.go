package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Run is one output of a bucket's merge: a final blob in the making, of
// distinct sorted positions, with its range and sample keys. Once the ply
// is Final its committed runs become FinalBlob rows.
//
// Invariant: the runs of one bucket's committed merge are disjoint and
// lie inside the bucket's key range (the ply's splitters), so runs of
// different buckets never overlap either.
type Run struct {
	Key      string // row key; set by the store
	Bucket   int
	Attempt  string // the merge attempt that wrote it
	Blob     string
	Count    int64 // positions
	Min, Max board.Position
	Terminal int64  // positions where the game is over
	Samples  []byte // sample keys for the next ply's splitters
}

func (r *Run) entity(pk string) storage.Entity {
	props := map[string]any{
		"Bucket": int64(r.Bucket), "Attempt": r.Attempt, "Blob": r.Blob, "Count": r.Count,
		"Min": r.Min.AppendKey(nil), "Max": r.Max.AppendKey(nil), "Terminal": r.Terminal,
	}
	if len(r.Samples) > 0 {
		props["Samples"] = r.Samples
	}
	return storage.Entity{PartitionKey: pk, RowKey: r.Key, Props: props}
}

func (s *Store) decodeRun(e storage.Entity) (*Run, error) {
	d := decode(e, s.board)
	r := &Run{Key: e.RowKey, Bucket: d.count("Bucket"), Attempt: d.str("Attempt"), Blob: d.str("Blob"),
		Count: d.int("Count"), Min: d.position("Min"), Max: d.position("Max"), Terminal: d.int("Terminal"),
		Samples: d.optBytes("Samples")}
	return r, d.done("run record " + e.RowKey)
}

// BucketMerge is the marker a bucket's merge commits last. Its presence
// says the bucket is merged; Attempt says whose output rows count, since
// two attempts of one merge may both have written theirs.
type BucketMerge struct {
	Bucket   int
	Attempt  string
	Segments int64 // expansion segments read
	Entries  int64 // entries read
	Outputs  int64 // runs written
}

// CommitBucket commits a bucket's merge: the output rows, in batches,
// then the marker, added once. won is false when another attempt's
// marker was there first; the caller then deletes its rows (DropRuns)
// and leaves its blobs to their compensation messages.
//
// Crash points: rows without a marker of their attempt are never read as
// outputs (Runs filters them), so a crash between batches leaves only
// rows that a later attempt's commit makes irrelevant.
func (s *Store) CommitBucket(ctx context.Context, ply int, m BucketMerge, outputs []*Run) (won bool, err error) {
	pk := s.bucketMarkers(ply).pk(m.Bucket)
	ops := make([]storage.Op, len(outputs))
	for k, o := range outputs {
		o.Bucket, o.Attempt, o.Key = m.Bucket, m.Attempt, rkOutput(m.Bucket, m.Attempt, k)
		ops[k] = storage.Op{Kind: storage.OpUpsert, Entity: o.entity(pk)}
	}
	if err := transactAll(ctx, s.state, pk, ops); err != nil {
		return false, fmt.Errorf("writing the outputs of bucket %d of ply %d: %w", m.Bucket, ply, err)
	}
	marker := storage.Entity{PartitionKey: pk, RowKey: rkBucketDone(m.Bucket), Props: map[string]any{
		"Attempt": m.Attempt, "Segments": m.Segments, "Entries": m.Entries, "Outputs": m.Outputs,
	}}
	won, err = addOnce(ctx, s.state, marker)
	if err != nil {
		return false, fmt.Errorf("committing bucket %d of ply %d: %w", m.Bucket, ply, err)
	}
	return won, nil
}

// DropRuns deletes the output rows of an attempt that lost bucket's
// commit. Leftovers are harmless: Runs never reads them.
func (s *Store) DropRuns(ctx context.Context, ply, bucket int, runs []*Run) error {
	pk := s.bucketMarkers(ply).pk(bucket)
	ops := make([]storage.Op, len(runs))
	for i, r := range runs {
		ops[i] = storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: r.Key}, ETag: storage.AnyETag}
	}
	return transactAll(ctx, s.state, pk, ops)
}

// BucketMerged reads a bucket's marker; ok is false while it is unmerged.
func (s *Store) BucketMerged(ctx context.Context, ply, bucket int) (m BucketMerge, ok bool, err error) {
	bm := s.bucketMarkers(ply)
	ms, err := s.bucketMerges(ctx, ply, markerKey(bm.item, bucket), markerKey(bm.item, bucket+1))
	if err != nil || len(ms) == 0 {
		return BucketMerge{}, false, err
	}
	return ms[0], true, nil
}

// BucketMerges reads the marker of every merged bucket of a ply.
func (s *Store) BucketMerges(ctx context.Context, ply int) ([]BucketMerge, error) {
	from, to := s.bucketMarkers(ply).allItems()
	return s.bucketMerges(ctx, ply, from, to)
}

func (s *Store) bucketMerges(ctx context.Context, ply int, from, to string) ([]BucketMerge, error) {
	m := s.bucketMarkers(ply)
	es, err := s.items(ctx, m, from, to)
	if err != nil {
		return nil, fmt.Errorf("reading the merged buckets of ply %d: %w", ply, err)
	}
	out := make([]BucketMerge, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = BucketMerge{Bucket: d.keyIndex(string(m.item)), Attempt: d.str("Attempt"),
			Segments: d.int("Segments"), Entries: d.int("Entries"), Outputs: d.int("Outputs")}
		if err := d.done("bucket marker " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AllMerged reports whether every bucket of a ply is merged, given that
// bucket is (see completion.go).
func (s *Store) AllMerged(ctx context.Context, p *Ply, bucket int) (bool, error) {
	return s.itemDone(ctx, s.bucketMarkers(p.Ply), bucket, p.Buckets)
}

// Runs lists the committed merge outputs of a ply, in key order: the rows
// of each merged bucket written by the attempt its marker names.
func (s *Store) Runs(ctx context.Context, ply int) ([]*Run, error) {
	merges, err := s.BucketMerges(ctx, ply)
	if err != nil {
		return nil, err
	}
	winner := make(map[int]string, len(merges))
	for _, m := range merges {
		winner[m.Bucket] = m.Attempt
	}
	es, err := queryPartitions(ctx, s.state, s.runRows(ply).pks(), runsFrom, runsTo)
	if err != nil {
		return nil, fmt.Errorf("listing runs of ply %d: %w", ply, err)
	}
	out := make([]*Run, 0, len(es))
	for _, e := range es {
		r, err := s.decodeRun(e)
		if err != nil {
			return nil, err
		}
		if a, ok := winner[r.Bucket]; ok && a == r.Attempt {
			out = append(out, r)
		}
	}
	return out, nil
}

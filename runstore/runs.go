package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// MergedBlob is one output of a bucket's merge: a final blob in the
// making, of distinct sorted positions, with its range and sample keys.
// Once the ply is Final its committed merged blobs become FinalBlob rows.
// (A "run" is a sorted stream of edges: an expansion or combined run;
// see docs/design.md's glossary.)
//
// Invariant: the merged blobs of one bucket's committed merge are
// disjoint and lie inside the bucket's key range (the ply's splitters),
// so those of different buckets never overlap either.
type MergedBlob struct {
	Key      string // row key; set by the store
	Bucket   int
	Attempt  string // the merge attempt that wrote it
	Blob     string
	Count    int64 // positions
	Min, Max board.Position
	Terminal int64  // positions where the game is over
	Samples  []byte // sample keys for the next ply's splitters
}

func (r *MergedBlob) entity(pk string) storage.Entity {
	props := map[string]any{
		"Bucket": int64(r.Bucket), "Attempt": r.Attempt, "Blob": r.Blob, "Count": r.Count,
		"Min": r.Min.AppendKey(nil), "Max": r.Max.AppendKey(nil), "Terminal": r.Terminal,
	}
	if len(r.Samples) > 0 {
		props["Samples"] = r.Samples
	}
	return storage.Entity{PartitionKey: pk, RowKey: r.Key, Props: props}
}

func (s *Store) decodeMerged(e storage.Entity) (*MergedBlob, error) {
	d := decode(e, s.board)
	r := &MergedBlob{Key: e.RowKey, Bucket: d.count("Bucket"), Attempt: d.str("Attempt"), Blob: d.str("Blob"),
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
	Outputs  int64 // merged blobs written
	// Positions and Terminal are the outputs' sums: read back as zero
	// from a marker of before tallies (tally.go).
	Positions, Terminal int64
	// Merged are the outputs the merge commits: Commit writes their rows
	// ahead of the marker. Markers read back leave it empty (MergedBlobs
	// reads the committed outputs).
	Merged []*MergedBlob
}

// MergeStage is the bucket merges of ply p: one item per bucket, each
// committing a BucketMerge with its output rows.
//
// Crash points of the commit: the output rows go first, in batches, and
// rows without a marker of their attempt are never read as outputs (Runs
// filters them), so a crash between batches leaves only rows that a
// later attempt's commit makes irrelevant. An attempt whose marker lost
// deletes its rows again (dropMerged), and leftovers are harmless.
func (s *Store) MergeStage(p *Ply) Stage[BucketMerge] { return newStage(s, p, &mergeKind) }

var mergeKind = stageKind[BucketMerge]{
	item:  "bucket",
	items: func(p *Ply) int { return p.Buckets },
	from:  Merging, to: Merging,
	early: func(p *Ply) string {
		return fmt.Sprintf("ply %d is %s: its buckets are merged only once it is merging", p.Ply, p.State)
	},
	missing: func(p *Ply, i int) string { return fmt.Sprintf("ply %d has %d buckets, not %d", p.Ply, p.Buckets, i+1) },
	rows:    func(s *Store, ply int) stageMarkers { return s.bucketMarkers(ply) },
	index:   func(m BucketMerge) int { return m.Bucket },
	attempt: func(m BucketMerge) string { return m.Attempt },
	// The marker tallies its outputs, and keeps a sample of their
	// samples, for the merge stage's tally.
	encode: func(m BucketMerge) (map[string]any, error) {
		props := map[string]any{"Attempt": m.Attempt, "Segments": m.Segments, "Entries": m.Entries, "Outputs": m.Outputs}
		parts := make([]weighed, len(m.Merged))
		var positions, terminal int64
		for k, o := range m.Merged {
			positions += o.Count
			terminal += o.Terminal
			parts[k] = weighed{keys: o.Samples, weight: o.Count}
		}
		props["Positions"], props["Terminal"] = positions, terminal
		if keys := sampleKeys(parts, maxSamples); len(keys) > 0 {
			props["Samples"] = keys
		}
		return props, nil
	},
	decode: func(d *decoder, i int) BucketMerge {
		m := BucketMerge{Bucket: i, Attempt: d.str("Attempt"), Segments: d.int("Segments"), Entries: d.int("Entries"), Outputs: d.int("Outputs")}
		if d.optional("Positions") {
			m.Positions, m.Terminal = d.int("Positions"), d.int("Terminal")
		}
		return m
	},
	ahead: putMerged,
	lost:  dropMerged,
}

// putMerged writes the output rows of m's attempt, upserts in batches.
func putMerged(ctx context.Context, st Stage[BucketMerge], m BucketMerge) error {
	pk := st.rows().pk(m.Bucket)
	ops := make([]storage.Op, len(m.Merged))
	for k, o := range m.Merged {
		o.Bucket, o.Attempt, o.Key = m.Bucket, m.Attempt, rkOutput(m.Bucket, m.Attempt, k)
		ops[k] = storage.Op{Kind: storage.OpUpsert, Entity: o.entity(pk)}
	}
	return transactAll(ctx, st.store.state, pk, ops)
}

// dropMerged deletes the output rows of an attempt that lost its bucket's
// commit. The marker may name the same attempt (a second seed commits
// ply 0's one bucket again under the seed's fixed tag): its rows are
// then the winner's, and stay.
func dropMerged(ctx context.Context, st Stage[BucketMerge], m BucketMerge) error {
	won, err := st.MarkersIn(ctx, Span{m.Bucket, m.Bucket + 1})
	if err != nil || len(won) == 1 && won[0].Attempt == m.Attempt {
		return err
	}
	pk := st.rows().pk(m.Bucket)
	ops := make([]storage.Op, len(m.Merged))
	for i, r := range m.Merged {
		ops[i] = storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: r.Key}, ETag: storage.AnyETag}
	}
	return transactAll(ctx, st.store.state, pk, ops)
}

// MergedBlobs lists the committed merge outputs of ply p, in key order:
// the rows of each merged bucket written by the attempt its marker names.
func (s *Store) MergedBlobs(ctx context.Context, p *Ply) ([]*MergedBlob, error) {
	return s.MergedBlobsIn(ctx, p.Ply, Span{0, p.Buckets})
}

// MergedBlobsIn is MergedBlobs of the buckets span alone. A bucket's
// marker and output rows share its partition (pk of the bucket).
func (s *Store) MergedBlobsIn(ctx context.Context, ply int, span Span) ([]*MergedBlob, error) {
	if span.Lo >= span.Hi {
		return nil, nil
	}
	merges, err := markers(ctx, s, &mergeKind, ply, span)
	if err != nil {
		return nil, err
	}
	pks := s.bucketMarkers(ply).pksIn(span)
	winner := make(map[int]string, len(merges))
	for _, m := range merges {
		winner[m.Bucket] = m.Attempt
	}
	es, err := queryPartitions(ctx, s.state, pks, bucketPrefix(span.Lo), bucketPrefix(span.Hi))
	if err != nil {
		return nil, fmt.Errorf("listing the merged blobs of ply %d: %w", ply, err)
	}
	out := make([]*MergedBlob, 0, len(es))
	for _, e := range es {
		r, err := s.decodeMerged(e)
		if err != nil {
			return nil, err
		}
		if a, ok := winner[r.Bucket]; ok && a == r.Attempt {
			out = append(out, r)
		}
	}
	return out, nil
}

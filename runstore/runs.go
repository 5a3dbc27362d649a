package runstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Run is the range record of one sorted run of a ply: where its bytes
// live, its smallest and largest position, and whether a merge has
// claimed it. Expansion segments and partial merge outputs hold edges;
// final runs hold distinct positions.
//
// Invariant: runs of different buckets never overlap (buckets are cut at
// the ply's splitters), so each bucket is merged on its own.
type Run struct {
	Key      string // row key; set by the store
	ETag     string
	Bucket   int
	Blob     string
	Off, Len int64 // the run's bytes in Blob
	Count    int64 // entries (edges) or, when Final, positions
	Min, Max board.Position
	Created  int64 // Unix ns; older runs are merged first
	Claim    *Claim
	Claimed  int64 // when Claim was taken (Unix ns); see ReleaseClaim
	Final    bool
	Terminal int64  // final runs: positions where the game is over
	Samples  []byte // final runs: sample keys for the next ply's splitters
}

// ClaimedBy reports whether the claim c owns the run.
func (r *Run) ClaimedBy(c Claim) bool { return r.Claim != nil && *r.Claim == c }

func (r *Run) entity(ply int) storage.Entity {
	claim := ""
	if r.Claim != nil {
		claim = r.Claim.String()
	}
	props := map[string]any{
		"Bucket": int64(r.Bucket), "Blob": r.Blob, "Off": r.Off, "Len": r.Len, "Count": r.Count,
		"Min": r.Min.AppendKey(nil), "Max": r.Max.AppendKey(nil), "Created": r.Created,
		"Claim": claim, "Claimed": r.Claimed, "Final": r.Final, "Terminal": r.Terminal,
	}
	if len(r.Samples) > 0 {
		props["Samples"] = r.Samples
	}
	return storage.Entity{PartitionKey: pkRuns(ply), RowKey: r.Key, Props: props}
}

func (s *Store) decodeRun(e storage.Entity) (*Run, error) {
	d := decode(e, s.board)
	r := &Run{Key: e.RowKey, ETag: e.ETag, Bucket: d.count("Bucket"), Blob: d.str("Blob"),
		Off: d.int("Off"), Len: d.int("Len"), Count: d.int("Count"),
		Min: d.position("Min"), Max: d.position("Max"), Created: d.int("Created"),
		Claimed: d.int("Claimed"), Final: d.bool("Final"), Terminal: d.int("Terminal"),
		Samples: d.optBytes("Samples")}
	if text := d.str("Claim"); text != "" && d.err == nil {
		c, err := ParseClaim(text)
		if err != nil {
			d.fail(err)
		}
		r.Claim = &c
	}
	return r, d.done("run record " + e.RowKey)
}

// Runs lists every run record of a ply.
func (s *Store) Runs(ctx context.Context, ply int) ([]*Run, error) {
	return s.listRuns(ctx, ply, runsFrom, runsTo)
}

// BucketRuns lists the run records of one bucket of a ply.
func (s *Store) BucketRuns(ctx context.Context, ply, bucket int) ([]*Run, error) {
	p := bucketPrefix(bucket)
	return s.listRuns(ctx, ply, p, p[:len(p)-1]+".")
}

func (s *Store) listRuns(ctx context.Context, ply int, from, to string) ([]*Run, error) {
	es, err := queryAll(ctx, s.state, pkRuns(ply), from, to)
	if err != nil {
		return nil, fmt.Errorf("listing runs of ply %d: %w", ply, err)
	}
	out := make([]*Run, 0, len(es))
	for _, e := range es {
		r, err := s.decodeRun(e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ClaimRuns gives the runs to claim c in one transaction guarded by their
// ETags: ErrConflict if another scan changed any of them first. The runs
// are updated on success.
func (s *Store) ClaimRuns(ctx context.Context, ply int, c Claim, runs []*Run, now time.Time) error {
	if len(runs) > storage.MaxBatchOps {
		return fmt.Errorf("claiming %d runs: at most %d fit one transaction", len(runs), storage.MaxBatchOps)
	}
	ops := make([]storage.Op, len(runs))
	for i, r := range runs {
		claimed := *r
		claimed.Claim, claimed.Claimed = &c, now.UnixNano()
		ops[i] = storage.Op{Kind: storage.OpUpdate, Entity: claimed.entity(ply), ETag: r.ETag}
	}
	etags, err := s.state.Transact(ctx, pkRuns(ply), ops)
	if err != nil {
		return fmt.Errorf("claiming runs of ply %d for %s: %w", ply, c, conflictOrGone(err))
	}
	for i, r := range runs {
		r.Claim, r.Claimed, r.ETag = &c, now.UnixNano(), etags[i]
	}
	return nil
}

// ReleaseRuns frees runs of an expired claim, in transactions of at most
// storage.MaxBatchOps guarded by their ETags: ErrConflict if the claim's
// merge committed or another scan released them meanwhile.
func (s *Store) ReleaseRuns(ctx context.Context, ply int, runs []*Run) error {
	for lo := 0; lo < len(runs); lo += storage.MaxBatchOps {
		batch := runs[lo:min(len(runs), lo+storage.MaxBatchOps)]
		ops := make([]storage.Op, len(batch))
		for i, r := range batch {
			free := *r
			free.Claim, free.Claimed = nil, 0
			ops[i] = storage.Op{Kind: storage.OpUpdate, Entity: free.entity(ply), ETag: r.ETag}
		}
		etags, err := s.state.Transact(ctx, pkRuns(ply), ops)
		if err != nil {
			return fmt.Errorf("releasing runs of ply %d: %w", ply, conflictOrGone(err))
		}
		for i, r := range batch {
			r.Claim, r.Claimed, r.ETag = nil, 0, etags[i]
		}
	}
	return nil
}

// conflictOrGone turns a row changed or deleted by another writer into
// ErrConflict.
func conflictOrGone(err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return conflict(err)
}

// MergeStats is the row a merge commits with its outputs; its presence
// says that the claim's merge committed.
type MergeStats struct {
	Reads   int64 // runs read
	Entries int64 // entries read
	Outputs int64 // runs written
}

// CommitMerge swaps a merge's inputs for its outputs in one transaction:
// inputs deleted under the ETags the merge read, outputs added, and the
// claim's statistics row added. ErrConflict if any input changed (its
// claim was released, or another attempt committed).
func (s *Store) CommitMerge(ctx context.Context, ply int, c Claim, inputs, outputs []*Run, st MergeStats) error {
	pk := pkRuns(ply)
	ops := make([]storage.Op, 0, len(inputs)+len(outputs)+1)
	for _, in := range inputs {
		ops = append(ops, storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: in.Key}, ETag: in.ETag})
	}
	for k, o := range outputs {
		o.Bucket, o.Key = c.Bucket, rkOutput(c, k)
		ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: o.entity(ply)})
	}
	ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pk, RowKey: rkMergeStats(c), Props: map[string]any{
		"Reads": st.Reads, "Entries": st.Entries, "Outputs": st.Outputs,
	}}})
	if len(ops) > storage.MaxBatchOps {
		return fmt.Errorf("merge %s of ply %d: %d inputs and %d outputs exceed one transaction", c, ply, len(inputs), len(outputs))
	}
	if _, err := s.state.Transact(ctx, pk, ops); err != nil {
		return fmt.Errorf("committing merge %s of ply %d: %w", c, ply, conflictOrGone(err))
	}
	return nil
}

// MergeCommitted reports whether claim c's merge has committed.
func (s *Store) MergeCommitted(ctx context.Context, ply int, c Claim) (bool, error) {
	return exists(ctx, s.state, pkRuns(ply), rkMergeStats(c))
}

// AllMergeStats reads the statistics of every merge of a ply.
func (s *Store) AllMergeStats(ctx context.Context, ply int) ([]MergeStats, error) {
	es, err := queryAll(ctx, s.state, pkRuns(ply), statsFrom, statsTo)
	if err != nil {
		return nil, err
	}
	out := make([]MergeStats, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = MergeStats{Reads: d.int("Reads"), Entries: d.int("Entries"), Outputs: d.int("Outputs")}
		if err := d.done("merge statistics " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

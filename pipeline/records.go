package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/storage"
)

// rangeRecord is a table row naming one sorted run of a ply: where it
// lives, its smallest and largest position and its state. Runs written by
// expansion and by intermediate merges hold edges (dedup.EntryLen bytes
// each); final runs hold only positions (board.KeyLen bytes each).
type rangeRecord struct {
	ID       string
	ETag     string
	Blob     string
	Off, Len int64
	Count    int64
	Min, Max board.Position
	Created  int64
	Merging  bool
	Owner    string
	Claimed  int64 // when Owner claimed it (Unix ns); see releaseExpired
	Final    bool
	Terminal int64
	Samples  []byte
}

func (rr *rangeRecord) entity(ply int) storage.Entity {
	props := map[string]any{
		"Blob": rr.Blob, "Off": rr.Off, "Len": rr.Len, "Count": rr.Count,
		"Min": rr.Min.AppendKey(nil), "Max": rr.Max.AppendKey(nil),
		"Created": rr.Created, "Merging": rr.Merging, "Owner": rr.Owner, "Claimed": rr.Claimed,
		"Final": rr.Final, "Terminal": rr.Terminal,
	}
	if len(rr.Samples) > 0 {
		props["Samples"] = rr.Samples
	}
	return storage.Entity{PartitionKey: pkRecords(ply), RowKey: rr.ID, Props: props}
}

func (r *Run) decodeRecord(e storage.Entity) (*rangeRecord, error) {
	rr := &rangeRecord{ID: e.RowKey, ETag: e.ETag}
	rr.Blob = propStr(e, "Blob")
	rr.Off, rr.Len, rr.Count = propInt(e, "Off"), propInt(e, "Len"), propInt(e, "Count")
	rr.Created, rr.Merging, rr.Owner = propInt(e, "Created"), propBool(e, "Merging"), propStr(e, "Owner")
	rr.Claimed = propInt(e, "Claimed")
	rr.Final, rr.Terminal, rr.Samples = propBool(e, "Final"), propInt(e, "Terminal"), propBytes(e, "Samples")
	var err error
	if rr.Min, err = r.Board.DecodeKey(propBytes(e, "Min")); err != nil {
		return nil, fmt.Errorf("record %s min: %w", e.RowKey, err)
	}
	if rr.Max, err = r.Board.DecodeKey(propBytes(e, "Max")); err != nil {
		return nil, fmt.Errorf("record %s max: %w", e.RowKey, err)
	}
	return rr, nil
}

// Record row keys: runs start with 's', then their bucket (see
// bucketPrefix): expansion segments and merge outputs alike, so one
// bucket's runs are one row-key range; merge outputs of claims without a
// bucket start with 'o'. Markers start with 'm' and 'd', complete buckets
// with 'c', merge statistics with 'x'; rkBuckets counts the buckets and
// rkScan names who started the first scan.
const (
	recFrom   = "o"
	recTo     = "t"
	rkBuckets = "nbuckets"
	rkScan    = "nscan" // the expansion task that started the ply's first scan
)

func segmentID(bucket, task int) string { return fmt.Sprintf("%s-%06d", bucketPrefix(bucket), task) }

// outputID names output k of a merge claim; it sorts with the claim's
// bucket when the claim names one.
func outputID(claim string, k int) string {
	if b, ok := claimBucket(claim); ok {
		return fmt.Sprintf("%s-o%s-%04d", bucketPrefix(b), claim, k)
	}
	return fmt.Sprintf("o%s-%04d", claim, k)
}
func batchMarker(task, batch int) string { return fmt.Sprintf("m%06d-%04d", task, batch) }
func doneMarker(task int) string         { return fmt.Sprintf("d%06d", task) }
func mergeStatID(claim string) string    { return "x" + claim }
func bucketDone(bucket int) string       { return "c" + bucketPrefix(bucket)[1:] }

// bucketPrefix starts the row key of every run of a bucket. Buckets are
// cut at the ply's splitters, so runs of different buckets never overlap
// and each bucket is merged on its own.
func bucketPrefix(bucket int) string { return fmt.Sprintf("s%05d", bucket) }

// recordBucket is the bucket of a run record, if its row key names one.
func recordBucket(id string) (int, bool) {
	if len(id) < 7 || id[0] != 's' || id[6] != '-' {
		return 0, false
	}
	return digits(id[1:6])
}

// claimName names a claim on a group of runs: the claiming attempt, the
// group's number, its bucket (five digits, or none when the group's runs
// name no bucket), and 'f' for a final merge or 'p' for a partial one.
func claimName(attempt string, group, bucket int, final bool) string {
	suffix := "p"
	if final {
		suffix = "f"
	}
	if bucket < 0 {
		return fmt.Sprintf("%sg%d%s", attempt, group, suffix)
	}
	return fmt.Sprintf("%sg%db%05d%s", attempt, group, bucket, suffix)
}

// claimBucket is the bucket a claim names, if any.
func claimBucket(claim string) (int, bool) {
	n := len(claim)
	if n < 8 || claim[n-7] != 'b' {
		return 0, false
	}
	return digits(claim[n-6 : n-1])
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// listRecords reads every run record of a ply.
func (r *Run) listRecords(ctx context.Context, ply int) ([]*rangeRecord, error) {
	return r.listRange(ctx, ply, recFrom, recTo)
}

// listBucket reads the run records of one bucket of a ply.
func (r *Run) listBucket(ctx context.Context, ply, bucket int) ([]*rangeRecord, error) {
	p := bucketPrefix(bucket)
	return r.listRange(ctx, ply, p+"-", p+".")
}

func (r *Run) listRange(ctx context.Context, ply int, from, to string) ([]*rangeRecord, error) {
	es, err := queryAll(ctx, r.state, pkRecords(ply), from, to)
	if err != nil {
		return nil, err
	}
	out := make([]*rangeRecord, 0, len(es))
	for _, e := range es {
		rr, err := r.decodeRecord(e)
		if err != nil {
			return nil, err
		}
		out = append(out, rr)
	}
	return out, nil
}

func toDedup(rs []*rangeRecord) []dedup.Record {
	out := make([]dedup.Record, len(rs))
	for i, rr := range rs {
		out[i] = dedup.Record{ID: rr.ID, Min: rr.Min, Max: rr.Max, Created: rr.Created, Count: rr.Count, Merging: rr.Merging}
	}
	return out
}

// blobFor names the blobs of a ply; one folder per ply makes the sweep at
// ply completion a single listing.
func blobFor(ply int, name string) string { return fmt.Sprintf("p%02d/%s", ply, name) }

// backPartition is the backtracking partition of a final blob.
func backPartition(blob string) string { return strings.ReplaceAll(blob, "/", "-") }

// noticePartition holds what the children report to one final blob of ply.
func noticePartition(ply, blob int) string { return fmt.Sprintf("n%02d-%06d", ply, blob) }

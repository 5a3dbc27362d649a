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

// Record row keys: runs start with 's' (expansion segments) or 'o' (merge
// outputs); markers with 'm' and 'd'; merge statistics with 'x'.
const (
	recFrom = "o"
	recTo   = "t"
)

func segmentID(bucket, task int) string { return fmt.Sprintf("s%05d-%06d", bucket, task) }
func outputID(claim string, k int) string {
	return fmt.Sprintf("o%s-%04d", claim, k)
}
func batchMarker(task, batch int) string { return fmt.Sprintf("m%06d-%04d", task, batch) }
func doneMarker(task int) string         { return fmt.Sprintf("d%06d", task) }
func mergeStatID(claim string) string    { return "x" + claim }

// listRecords reads every run record of a ply.
func (r *Run) listRecords(ctx context.Context, ply int) ([]*rangeRecord, error) {
	es, err := queryAll(ctx, r.state, pkRecords(ply), recFrom, recTo)
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

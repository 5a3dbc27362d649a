package pipeline

import (
	"context"
	"fmt"
)

// Footprint is what a run keeps in storage: blob bytes as listed, and
// table rows sized as Azure counts them (storage.EntitySize).
type Footprint struct {
	Blobs      int64 `json:"blobs"`
	BlobBytes  int64 `json:"blob_bytes"`
	Rows       int64 `json:"rows"`
	TableBytes int64 `json:"table_bytes"`
}

// Bytes is the total stored.
func (f Footprint) Bytes() int64 { return f.BlobBytes + f.TableBytes }

// Footprint measures what the run holds now: every blob of its container,
// and the table partitions the pipeline writes (run, plies, statistics,
// each ply's records and resolution markers, and each final blob's
// backtracking and notice rows). It reads everything, so it is for
// benchmarks and inspection, not for workers.
func (r *Run) Footprint(ctx context.Context) (Footprint, error) {
	var f Footprint
	blobs, err := r.blobs.List(ctx, "")
	if err != nil {
		return f, fmt.Errorf("listing blobs: %w", err)
	}
	for _, b := range blobs {
		f.Blobs++
		f.BlobBytes += b.Size
	}
	rows, err := r.store.Footprint(ctx, r.Config.Target)
	if err != nil {
		return f, err
	}
	f.Rows, f.TableBytes = rows.Rows, rows.Bytes
	return f, nil
}

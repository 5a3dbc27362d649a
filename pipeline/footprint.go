package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
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
	count := func(t storage.Table, pk string) error {
		es, err := queryAll(ctx, t, pk, "", "")
		if err != nil {
			return err
		}
		for _, e := range es {
			f.Rows++
			f.TableBytes += int64(storage.EntitySize(e))
		}
		return nil
	}
	for _, pk := range []string{pkRun, pkPlies, pkStats} {
		if err := count(r.state, pk); err != nil {
			return f, err
		}
	}
	for ply := 0; ply <= r.Config.Target; ply++ {
		if err := count(r.state, pkRecords(ply)); err != nil {
			return f, err
		}
		if err := count(r.state, pkResolve(ply)); err != nil {
			return f, err
		}
		p, err := r.getPly(ctx, ply)
		if errors.Is(err, storage.ErrNotFound) {
			continue // the run has not reached this ply
		}
		if err != nil {
			return f, err
		}
		for j, blob := range p.Blobs {
			if err := count(r.back, backPartition(blob)); err != nil {
				return f, err
			}
			if err := count(r.back, noticePartition(ply, j)); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

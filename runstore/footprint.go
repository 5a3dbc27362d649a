package runstore

import (
	"context"
	"errors"

	"github.com/reversi-cloud/reversi/storage"
)

// RowFootprint is how many rows a run keeps and their size as Azure counts
// it (storage.EntitySize).
type RowFootprint struct {
	Rows  int64
	Bytes int64
}

// Footprint measures every row of the run, for plies 0 to target. It
// reads everything, so it is for benchmarks and inspection, not workers.
func (s *Store) Footprint(ctx context.Context, target int) (RowFootprint, error) {
	var f RowFootprint
	count := func(t tableOf, pk string) error {
		es, err := queryAll(ctx, t, pk, "", "")
		for _, e := range es {
			f.Rows++
			f.Bytes += int64(storage.EntitySize(e))
		}
		return err
	}
	for _, pk := range []string{pkRun, pkPlies, pkWorkers} {
		if err := count(s.state, pk); err != nil {
			return f, err
		}
	}
	for ply := 0; ply <= target; ply++ {
		for _, rows := range []spread{s.runRows(ply), s.finalRows(ply), s.resolutionMarkers(ply).spread} {
			for _, pk := range rows.all() {
				if err := count(s.state, pk); err != nil {
					return f, err
				}
			}
		}
		finals, err := s.Finals(ctx, ply)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return f, err
		}
		for _, fb := range finals {
			if err := count(s.back, pkSources(fb.Blob)); err != nil {
				return f, err
			}
			if err := count(s.back, pkNotices(ply, fb.Index)); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

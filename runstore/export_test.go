package runstore

import (
	"context"

	"github.com/reversi-cloud/reversi/storage"
)

// AsVersion1 rewrites a run's settings row as releases before version 2
// of it wrote it (without Completion), for the tests that resume such a
// run (migrate_test.go).
func AsVersion1(ctx context.Context, state storage.Table) error {
	e, err := state.Get(ctx, pkRun, rkConfig)
	if err != nil {
		return err
	}
	delete(e.Props, "Completion")
	delete(e.Props, "CompensationShards")
	e.Props["Version"] = int64(1)
	_, err = state.Update(ctx, e, e.ETag)
	return err
}

// GroupPartition is the base partition that a flat count of ply's
// resolutions keeps its group markers in.
func GroupPartition(ply int) string { return pkResolutions(ply) }

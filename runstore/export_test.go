package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// AsVersion rewrites a run's settings row as the releases of its version
// v wrote it, for the tests that resume such a run (migrate_test.go):
// version 1, before Completion and CompensationShards; version 4, whose
// tree of 64 is Completion "".
func AsVersion(ctx context.Context, state storage.Table, v int) error {
	e, err := state.Get(ctx, pkRun, rkConfig)
	if err != nil {
		return err
	}
	switch v {
	case 1:
		delete(e.Props, "Completion")
		delete(e.Props, "CompensationShards")
	case 4:
		e.Props["Completion"] = ""
	default:
		return fmt.Errorf("no settings row of version %d here", v)
	}
	e.Props["Version"] = int64(v)
	_, err = state.Update(ctx, e, e.ETag)
	return err
}

// ResolutionGroups counts the markers of the completion groups of ply's
// resolutions (the nodes of the tree's first level, or a flat count's
// groups) in a run of shards partition shards that counts as completion
// says.
func ResolutionGroups(ctx context.Context, state storage.Table, ply int, completion Completion, shards int) (int, error) {
	s := New(nil, []storage.Table{state}, nil, shards, completion)
	m := s.resolutionMarkers(ply)
	prefix := m.groupPrefix()
	es, err := queryPartitions(ctx, s.state, m.groupPks(), prefix, prefix+"~")
	return len(es), err
}

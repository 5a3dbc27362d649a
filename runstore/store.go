package runstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Errors of the store's operations, besides storage's own sentinels.
var (
	// ErrConflict: an ETag-guarded write lost to another writer, which
	// changed the row first. The caller's view is stale.
	ErrConflict = errors.New("runstore: changed by another writer")
	// ErrIllegalTransition: a ply transition that the lifecycle forbids.
	ErrIllegalTransition = errors.New("runstore: illegal ply transition")
)

// Store reads and writes the rows of one run.
type Store struct {
	board  *board.Board
	states []storage.Table
	backs  []storage.Table
	shards int // partitions a ply's numbered rows are spread over
	// completion is how the run's stages count their done items.
	completion Completion
	// fixed keeps the ply records read, for PlySince.
	fixed plyCache
}

// New is the store of a run whose state rows (control rows and a ply's
// markers, merge outputs, final blobs and resolutions) live in states
// and whose backtracking rows live in backs, each partition in the table
// that a hash of its key picks (state, back), so that tables on several
// storage accounts share their load; the control partitions (the run's
// settings, its plies, its workers) stay in states[0]. A ply's numbered
// rows are also spread over shards partitions (keys.go), so that no
// partition takes more than Azure's target of about 2,000 entities a
// second; 1 keeps each kind in one partition. Its stages count their
// done items as completion says (completion.go): as the run's settings
// (Config.Completion) record; "" is TreeCompletion.
func New(b *board.Board, states, backs []storage.Table, shards int, completion Completion) *Store {
	return &Store{board: b, states: states, backs: backs, shards: max(1, shards), completion: completion.orCurrent()}
}

// Tables are the tables the store keeps its rows in, for creating them.
func (s *Store) Tables() []storage.Table { return append(slices.Clone(s.states), s.backs...) }

// tableOf is the table of a partition: state or back.
type tableOf func(pk string) storage.Table

// state is the table of state partition pk: states[0] for the control
// partitions, which take a few requests a task, and FNV-1a of the key
// for a ply's partitions, which take the rest.
func (s *Store) state(pk string) storage.Table {
	switch pk {
	case pkRun, pkPlies, pkWorkers:
		return s.states[0]
	}
	return pick(s.states, pk)
}

// back is the table of backtracking partition pk: FNV-1a of the key.
func (s *Store) back(pk string) storage.Table { return pick(s.backs, pk) }

// pick is the table of ts that FNV-1a of pk picks.
func pick(ts []storage.Table, pk string) storage.Table {
	if len(ts) == 1 {
		return ts[0]
	}
	h := fnv.New32a()
	h.Write([]byte(pk))
	return ts[h.Sum32()%uint32(len(ts))]
}

// queryAll reads a whole row-key range of one partition.
func queryAll(ctx context.Context, t tableOf, pk, from, to string) ([]storage.Entity, error) {
	return storage.QueryAll(ctx, t(pk), pk, storage.QueryOptions{From: from, To: to})
}

// queryPartitions reads a row-key range of several partitions, merged
// in row-key order.
func queryPartitions(ctx context.Context, t tableOf, pks []string, from, to string) ([]storage.Entity, error) {
	var out []storage.Entity
	for _, pk := range pks {
		es, err := queryAll(ctx, t, pk, from, to)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	if len(pks) > 1 {
		slices.SortFunc(out, func(a, b storage.Entity) int { return strings.Compare(a.RowKey, b.RowKey) })
	}
	return out, nil
}

// exists reports whether a row exists.
func exists(ctx context.Context, t tableOf, pk, rk string) (bool, error) {
	_, err := t(pk).Get(ctx, pk, rk)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading row (%s, %s): %w", pk, rk, err)
	}
	return true, nil
}

// addOnce adds a row that may already exist from an earlier attempt;
// added is false when it did.
func addOnce(ctx context.Context, t tableOf, e storage.Entity) (added bool, err error) {
	_, err = t(e.PartitionKey).Add(ctx, e)
	switch {
	case errors.Is(err, storage.ErrExists):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// conflict turns a lost ETag race into ErrConflict.
func conflict(err error) error {
	if errors.Is(err, storage.ErrPreconditionFailed) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// transact runs ops on one partition in transactions of at most
// storage.MaxBatchOps operations each. Each transaction is atomic; the
// sequence is not.
func transactAll(ctx context.Context, t tableOf, pk string, ops []storage.Op) error {
	for lo := 0; lo < len(ops); lo += storage.MaxBatchOps {
		if _, err := t(pk).Transact(ctx, pk, ops[lo:min(len(ops), lo+storage.MaxBatchOps)]); err != nil {
			return err
		}
	}
	return nil
}

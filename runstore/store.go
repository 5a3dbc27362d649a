package runstore

import (
	"context"
	"errors"
	"fmt"

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
	board *board.Board
	state storage.Table
	back  storage.Table
}

// New is the store of a run whose control rows live in state and whose
// backtracking rows live in back.
func New(b *board.Board, state, back storage.Table) *Store {
	return &Store{board: b, state: state, back: back}
}

// Tables are the tables the store keeps its rows in, for creating them.
func (s *Store) Tables() []storage.Table { return []storage.Table{s.state, s.back} }

// queryAll reads a whole row-key range of one partition.
func queryAll(ctx context.Context, t storage.Table, pk, from, to string) ([]storage.Entity, error) {
	return storage.QueryAll(ctx, t, pk, storage.QueryOptions{From: from, To: to})
}

// exists reports whether a row exists.
func exists(ctx context.Context, t storage.Table, pk, rk string) (bool, error) {
	_, err := t.Get(ctx, pk, rk)
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
func addOnce(ctx context.Context, t storage.Table, e storage.Entity) (added bool, err error) {
	_, err = t.Add(ctx, e)
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
func transactAll(ctx context.Context, t storage.Table, pk string, ops []storage.Op) error {
	for lo := 0; lo < len(ops); lo += storage.MaxBatchOps {
		if _, err := t.Transact(ctx, pk, ops[lo:min(len(ops), lo+storage.MaxBatchOps)]); err != nil {
			return err
		}
	}
	return nil
}

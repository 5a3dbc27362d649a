package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// PutWorkerStats stores one process's storage statistics under its id,
// replacing what it stored before.
func (s *Store) PutWorkerStats(ctx context.Context, worker string, st storage.Stats) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if _, err := s.state(pkWorkers).Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: worker, Props: map[string]any{"Stats": b}}); err != nil {
		return fmt.Errorf("recording worker statistics: %w", err)
	}
	return nil
}

// WorkerStats reads every process's statistics.
func (s *Store) WorkerStats(ctx context.Context) ([]storage.Stats, error) {
	es, err := queryAll(ctx, s.state, pkWorkers, "", "")
	if err != nil {
		return nil, err
	}
	out := make([]storage.Stats, len(es))
	for i, e := range es {
		d := decode(e, nil)
		b := d.bytes("Stats")
		if err := d.done("worker statistics " + e.RowKey); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, fmt.Errorf("%w: worker %s statistics: %w", ErrMalformed, e.RowKey, err)
		}
	}
	return out, nil
}

// Done is the row that marks a run complete.
type Done struct {
	Root string // the start position's result
	// Scored says Score is the start position's score under perfect
	// play: black minus white, empty squares to the winner.
	Scored     bool
	Score      int64
	ScoreBlack int64 // a perfect-play final count, when known (else 0, 0)
	ScoreWhite int64
	Completed  int64 // Unix ns
}

// MarkDone marks the run complete. Marking it again rewrites the same row.
func (s *Store) MarkDone(ctx context.Context, d Done) error {
	_, err := s.state(pkRun).Upsert(ctx, storage.Entity{PartitionKey: pkRun, RowKey: rkDone, Props: map[string]any{
		"Root": d.Root, "Scored": d.Scored, "Score": d.Score, "ScoreBlack": d.ScoreBlack, "ScoreWhite": d.ScoreWhite, "Completed": d.Completed,
	}})
	if err != nil {
		return fmt.Errorf("marking the run complete: %w", err)
	}
	return nil
}

// RunDone reads the done row; nil while the run is in progress.
func (s *Store) RunDone(ctx context.Context) (*Done, error) {
	e, err := s.state(pkRun).Get(ctx, pkRun, rkDone)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the run's state: %w", err)
	}
	d := decode(e, nil)
	done := &Done{Root: d.str("Root"), ScoreBlack: d.int("ScoreBlack"), ScoreWhite: d.int("ScoreWhite"), Completed: d.int("Completed")}
	if d.optional("Scored") {
		done.Scored, done.Score = d.bool("Scored"), d.int("Score")
	}
	return done, d.done("the run's done row")
}

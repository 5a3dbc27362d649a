package runstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// WorkerStats is what one process recorded of its work on a run: its
// storage statistics, the CPU time (user and system) it had used,
// storage's included where the storage runs in the process (embedded),
// and the processor time it had held, busy or idle (cputime.Held).
type WorkerStats struct {
	Storage storage.Stats
	CPU     time.Duration
	Held    time.Duration
}

// Add is the sum of s and t.
func (s WorkerStats) Add(t WorkerStats) WorkerStats {
	return WorkerStats{Storage: s.Storage.Add(t.Storage), CPU: s.CPU + t.CPU, Held: s.Held + t.Held}
}

// workerRow is the JSON of a WorkerStats row: the statistics' own fields,
// then the CPU time and the time held, which rows of releases before
// each lack (0).
type workerRow struct {
	storage.Stats
	CPUSeconds  float64 `json:"cpu_seconds,omitempty"`
	HeldSeconds float64 `json:"held_seconds,omitempty"`
}

// PutWorkerStats stores one process's statistics under its id,
// replacing what it stored before.
func (s *Store) PutWorkerStats(ctx context.Context, worker string, st WorkerStats) error {
	b, err := json.Marshal(workerRow{st.Storage, st.CPU.Seconds(), st.Held.Seconds()})
	if err != nil {
		return err
	}
	if _, err := s.state(pkWorkers).Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: worker, Props: map[string]any{"Stats": b}}); err != nil {
		return fmt.Errorf("recording worker statistics: %w", err)
	}
	return nil
}

// WorkerStats reads every process's statistics.
func (s *Store) WorkerStats(ctx context.Context) ([]WorkerStats, error) {
	es, err := queryAll(ctx, s.state, pkWorkers, "", "")
	if err != nil {
		return nil, err
	}
	out := make([]WorkerStats, len(es))
	for i, e := range es {
		d := decode(e, nil)
		b := d.bytes("Stats")
		if err := d.done("worker statistics " + e.RowKey); err != nil {
			return nil, err
		}
		var row workerRow
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, fmt.Errorf("%w: worker %s statistics: %w", ErrMalformed, e.RowKey, err)
		}
		if !(row.CPUSeconds >= 0) || !(row.HeldSeconds >= 0) {
			return nil, fmt.Errorf("%w: worker %s statistics: %g CPU seconds, %g held", ErrMalformed, e.RowKey, row.CPUSeconds, row.HeldSeconds)
		}
		out[i] = WorkerStats{Storage: row.Stats, CPU: seconds(row.CPUSeconds), Held: seconds(row.HeldSeconds)}
	}
	return out, nil
}

// seconds is a duration of s seconds.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

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

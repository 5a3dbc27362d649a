package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// statsPeriod is how often a working process stores its storage
// transactions in its run.
const statsPeriod = 5 * time.Second

// recordStatsEvery stores be's transactions in run under id every
// period, until stop returns; the caller stores them a last time
// after that. The row under id is rewritten each time, never added to,
// so a process that is killed loses at most a period's count and none
// is counted twice. A run not seeded yet is looked for again next time.
func recordStatsEvery(be *storage.Metered, run, id string, period time.Duration, log *slog.Logger) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		var r *pipeline.Run
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if r == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, _ = pipeline.OpenRun(ctx, be, run)
				cancel()
			}
			if r != nil {
				storeStats(r, be, id, log)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// storeStats stores be's transactions and the process's compute in r
// under id, under a context of its own (the caller's may be done
// already), and logs a failure: the count is kept for inspect, and the
// work goes on without it.
func storeStats(r *pipeline.Run, be *storage.Metered, id string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.RecordStats(ctx, id, processStats(be)); err != nil {
		log.Warn("recording statistics failed", "err", err)
	}
}

// processStats is what this process records of its work: be's
// transactions, its CPU time and the processor time it has held.
func processStats(be *storage.Metered) runstore.WorkerStats {
	return runstore.WorkerStats{Storage: be.Stats(), CPU: cputime.Process(), Held: cputime.Held()}
}

package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
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
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if r == nil {
				r, _ = pipeline.OpenRun(ctx, be, run)
			}
			if r != nil {
				if err := r.RecordStats(ctx, id, be.Stats()); err != nil {
					log.Warn("recording statistics failed", "err", err)
				}
			}
			cancel()
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

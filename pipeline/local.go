package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage"
)

// StatusPeriod is how often RunLocal reads the run's status into its
// progress (Run.Status).
const StatusPeriod = 5 * time.Second

// localPollPerWorker is RunLocal's longest idle back-off per loop.
const localPollPerWorker = 10 * time.Millisecond

// LocalPollMax is the longest idle back-off (WorkerConfig.PollMax) of
// each of RunLocal's loops when the configuration leaves it out: loops
// in one process wait on each other's messages, and a short back-off
// keeps the hand-offs quick. Idle, the process polls workers/PollMax
// times a second, each poll asking the next shardedqueue.Probes shards
// of a rotation the loops share, so some loop finds a new message
// within about PollMax/workers times shards/Probes: 10 ms a loop keeps
// both bounded (100 polls a second; 10 ms a poll) however many loops
// there are, where hundreds of loops polling every 100 ms would take
// more than a queue serves (2,000 messages a second).
func LocalPollMax(workers int) time.Duration {
	return max(100*time.Millisecond, time.Duration(workers)*localPollPerWorker)
}

// RunLocal seeds a run and runs workers loops in this process until the
// run is complete, then reports. The loops are the same code cmd/worker
// runs, so a local run exercises exactly what a fleet does.
func RunLocal(ctx context.Context, be storage.Backend, cfg RunConfig, workers int, wcfg WorkerConfig, log *slog.Logger, progress *Progress) (*report.Report, error) {
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		return nil, fmt.Errorf("seeding run %q: %w", cfg.Name, err)
	}
	if workers < 1 {
		workers = 1
	}
	wcfg.ExitWhenDone = true
	if wcfg.PollMax == 0 {
		wcfg.PollMax = LocalPollMax(workers)
	}
	if progress != nil {
		pollCtx, stopPolling := context.WithCancel(ctx)
		defer stopPolling()
		go r.pollStatus(pollCtx, progress, StatusPeriod)
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		w, err := NewWorker(r, wcfg, log, progress)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Run(ctx)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.Report(ctx)
}

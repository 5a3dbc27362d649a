package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
)

// TestIdlePolling: idle worker loops over a work queue of 16 shards make
// at most shardedqueue.Probes calls of it a poll, yet ask every shard,
// and one call of the compensation queue's 16 shards, yet ask every one;
// the process's loops count the queue once for the stall check, not once
// a loop; and draining, they count the queues at most once per doneEvery,
// not after every poll. The polls are counted, not timed: the loops are
// stopped after a number of polls of the compensation queue, which every
// empty poll of the work queue is followed by.
func TestIdlePolling(t *testing.T) {
	const shards, loops, polls = 16, 4, 200
	for _, drain := range []bool{false, true} {
		name := map[bool]string{false: "idle", true: "draining"}[drain]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := RunConfig{Name: "idle", Config: runstore.Config{Board: 4, Target: 2, QueueShards: shards}}
			var (
				mu        sync.Mutex
				counting  bool
				dequeues  = map[string]int{} // by queue
				lengths   = map[string]int{}
				compPolls int
			)
			comp := map[string]bool{}
			for _, q := range CompensationQueues(cfg.Name, shards) {
				comp[q] = true
			}
			pollCtx, stop := context.WithCancel(ctx)
			defer stop()
			be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
				mu.Lock()
				if counting {
					switch c.Op {
					case storage.QueueDequeue:
						dequeues[c.Resource]++
						if comp[c.Resource] {
							if compPolls++; compPolls == polls {
								stop()
							}
						}
					case storage.QueueApproximateLength:
						lengths[c.Resource]++
					}
				}
				mu.Unlock()
				return next()
			})
			if _, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{PollMax: 20 * time.Millisecond}, testLogger(t), nil); err != nil {
				t.Fatal(err)
			}
			r, err := OpenRun(ctx, be, cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			if drain {
				// A compensation message that surfaces long after the
				// test: the run is complete, but its queues never empty.
				text := message.Message{Kind: message.KindCompensation, Ply: 1, Blob: runstore.ExpansionBlobName(1, 0, "late")}.Format()
				if _, err := r.compensation.Enqueue(ctx, text, storage.EnqueueOptions{Delay: time.Hour, TTL: -1}); err != nil {
					t.Fatal(err)
				}
			}
			wcfg := WorkerConfig{Visibility: time.Hour, PollMin: time.Millisecond, PollMax: time.Millisecond, ExitWhenDone: drain, Drain: drain}
			var wg sync.WaitGroup
			mu.Lock()
			counting = true
			mu.Unlock()
			start := time.Now()
			for range loops {
				w, err := NewWorker(r, wcfg, testLogger(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() { w.Run(pollCtx) })
			}
			wg.Wait()
			elapsed := time.Since(start)
			if ctx.Err() != nil {
				t.Fatal("the loops were not stopped")
			}
			mu.Lock()
			defer mu.Unlock()
			// Every poll of the work queue is followed by one of the
			// compensation queue (the last, perhaps, cut off by the stop).
			work := WorkQueues(cfg.Name, shards)
			workCalls, workLengths := 0, 0
			for _, q := range work {
				if dequeues[q] == 0 {
					t.Errorf("shard %s never asked in %d polls", q, polls)
				}
				workCalls += dequeues[q]
				workLengths += lengths[q]
			}
			if max := shardedqueue.Probes * (polls + loops); workCalls > max {
				t.Errorf("%d polls made %d calls of the work queue, want at most %d (%d a poll)", polls, workCalls, max, shardedqueue.Probes)
			}
			for q := range comp {
				if dequeues[q] == 0 {
					t.Errorf("compensation shard %s never asked in %d polls", q, polls)
				}
			}
			// The stall check counts every shard once for the process;
			// draining, each count of the queues adds one a shard, once
			// a doneEvery at most.
			want := shards
			if drain {
				want += shards * (1 + int(elapsed/doneEvery))
			}
			if workLengths > want || workLengths < shards {
				t.Errorf("%d loops counted the work queue's shards %d times in %v, want %d to %d: %v", loops, workLengths, elapsed, shards, want, lengths)
			}
		})
	}
}

package plan

import (
	"time"

	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/shardedqueue"
	"github.com/reversi-cloud/reversi/task"
)

// Polling is the plan's line for the dequeues of worker loops that find
// no message. Their number follows the time the loops run and how they
// back off (pipeline.Worker.Run), not the work: a rate per loop and
// second, not per item. A dequeue that finds a message is that
// message's ply's (plan/internal/measure bills it so), so the plies'
// control transactions have it and this line does not.
type Polling struct {
	// Transactions = CallsPerLoopSecond x Workers x Seconds.
	Transactions int64 `json:"transactions"`
	// CallsPerLoopSecond is PollsPerBackOff polls a loop per longest
	// back-off (PollMaxSeconds), CallsPerPoll calls each.
	CallsPerLoopSecond float64 `json:"calls_per_loop_second"`
	CallsPerPoll       int     `json:"calls_per_poll"`
	PollMaxSeconds     float64 `json:"poll_max_seconds"`
	// Workers poll for Seconds, the plan's wall time.
	Workers int     `json:"workers"`
	Seconds float64 `json:"seconds"`
	CostUSD float64 `json:"cost_usd"`
}

// PollsPerBackOff is how many polls a worker loop makes, on average over
// a run, in each longest idle back-off (WorkerConfig.PollMax) of the
// run's wall time. A loop that finds nothing doubles its back-off from
// PollMin up to PollMax, so an idle loop makes one poll a PollMax; a
// loop that has just handled a message polls sooner, and a busy one
// only once a visibility timeout (the compensation queue).
//
// Fitted to four runs of `enumerate -storage sim -sim-latency 10ms
// -board 8 -bucket-blobs 64 -grow-from 0 -merge-fan-in 64 -workers 512`
// (PollMax 5.12 s, pipeline.LocalPollMax; 3 calls a poll), 2026-11-28
// on a 2-core AMD EPYC VM shared with other sessions, whose polls that
// found nothing (the report's transactions of no ply less one dequeue a
// message handled) give per PollMax of their wall time: 0.78 polls
// (ply 10, -blob-positions 16, bd24e00, 601 s: 140,734 calls), 1.56
// (the same with 128, 250 s, of them 136 s of a stall: 116,925), 0.63
// and 0.68 (ply 8, 16, the two runs of docs/performance.md's "Polling a
// sharded queue" with two shards a poll, 411 s and 504 s: 77,630 and
// 102,734). This is their geometric mean; testdata/sim-polling.json has
// them, and TestPollingFollowsTheSimRuns checks it against each.
const PollsPerBackOff = 0.85

// CallsPerPoll is the storage calls of a poll that finds nothing, with
// a work queue of shards shards: up to shardedqueue.Probes of them, and
// the compensation queue.
func CallsPerPoll(shards int) int { return min(shardedqueue.Probes, max(1, shards)) + 1 }

// pollingOf is the polling line of workers loops, each backing off to
// at most pollMax, that run for seconds over a work queue of shards
// shards.
func pollingOf(workers int, seconds float64, pollMax time.Duration, shards int, prices report.Prices) Polling {
	p := Polling{CallsPerPoll: CallsPerPoll(shards), PollMaxSeconds: pollMax.Seconds(), Workers: workers, Seconds: seconds}
	p.CallsPerLoopSecond = PollsPerBackOff * float64(p.CallsPerPoll) / p.PollMaxSeconds
	p.Transactions = round(p.CallsPerLoopSecond * float64(workers) * seconds)
	stats := storage.Stats{Ops: []storage.OpStat{{Service: storage.QueueDequeue.Service(), Operation: storage.QueueDequeue.Name(), Category: task.CategoryControl, Count: p.Transactions}}}
	p.CostUSD = report.EstimateCost(stats, 0, prices).TransactionsUSD
	return p
}

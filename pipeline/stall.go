package pipeline

import (
	"context"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
)

// nudgeIfStalled runs when a poll finds no visible message, at most once
// per visibility timeout per process (its loops share the check: counting
// a sharded work queue asks every shard). It counts the queue rather than
// trusting the empty poll, which asked only some shards. A queue whose
// length is zero holds no message at all, visible, in flight or delayed
// (Azure never reports less than the true count), so if the run is not
// complete then some message was lost: a merge message deleted or poisoned, a scan that never
// came, or the message that owed a ply's follow-up poisoned. It enqueues
// a scan of each open ply, and of each ply whose follow-up is not done
// (runstore.Ply.Owes): the scan enqueues the merges of the buckets not
// yet merged, or completes the ply, or takes the follow-up over once its
// owner's lease has run out (flow.followUp). Several workers may nudge
// at once; duplicate scans are harmless.
func (w *Worker) nudgeIfStalled(ctx context.Context) {
	if !w.run.stallChecked.open(w.cfg.Visibility) {
		return
	}
	if n, err := w.run.work.ApproximateLength(ctx); err != nil || n > 0 {
		return
	}
	if done, err := w.run.Done(ctx); err != nil || done != nil {
		return
	}
	plies, err := w.run.store.Plies(ctx)
	if err != nil {
		w.log.Warn("reading ply records to recover a stalled run failed", "err", err)
		return
	}
	for _, p := range plies {
		if p.State.AtLeast(runstore.Final) && !p.Owes() {
			continue
		}
		if err := w.run.shared.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply}); err != nil {
			w.log.Warn("enqueuing a scan to recover a stalled run failed", "ply", p.Ply, "err", err)
			continue
		}
		w.log.Warn("the work queue is empty but the run is not complete; enqueued a scan", "ply", p.Ply)
	}
}

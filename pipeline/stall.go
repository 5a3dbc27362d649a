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
// (Azure never reports less than the true count of a queue; a sharded
// one, see below), so if the run is not complete then some message was
// lost: a merge message deleted or poisoned, a scan that never came, or
// the message that owed a ply's follow-up poisoned. It enqueues a scan
// of each open ply, and of each ply whose follow-up is not done
// (runstore.Ply.Owes): the scan enqueues the combine tasks or merges of
// the ply not yet done (through a tree of scans, each of a bounded span
// of them: dedup's ScanHandler), or completes the ply, or takes the
// follow-up over once its owner's lease has run out (flow.followUp).
// Several workers may nudge at once; duplicate scans are harmless.
//
// Harmless, but not free: a scan of an open ply enqueues every task of
// its step not yet done, a second attempt of each one under way, whose
// loser's blobs then wait for their compensation message. So the stall
// is confirmed first. A sharded queue is counted a shard at a time, and
// a count can miss a message that a handler enqueued on a shard already
// counted before deleting its own from a shard counted after. At a ply's
// start, when one message leads to the next, such a count found the
// queue empty in one of some thirty-five rehearsals to 8x8 ply 9
// (TestFleetRehearsal's command): the nudge doubled ply 1's merge, and
// the loser's compensation message held the rehearsal's drain for four
// minutes. So the check is made twice, a poll back-off apart, and the
// nudge needs both to find the queue empty and no ply record rewritten:
// a run that is moving rewrites them within that time when its queue is
// that short.
func (w *Worker) nudgeIfStalled(ctx context.Context) {
	if !w.run.stallChecked.open(w.cfg.Visibility) {
		return
	}
	first, ok := w.stalled(ctx)
	if !ok {
		return
	}
	sleep(ctx, w.cfg.PollMax)
	plies, ok := w.stalled(ctx)
	if !ok || !sameRecords(byPly(first), byPly(plies)) {
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

// stalled reads the ply records if the work queue counts no message and
// the run is not complete.
func (w *Worker) stalled(ctx context.Context) ([]*runstore.Ply, bool) {
	if n, err := w.run.work.ApproximateLength(ctx); err != nil || n > 0 {
		return nil, false
	}
	if done, err := w.run.Done(ctx); err != nil || done != nil {
		return nil, false
	}
	plies, err := w.run.store.Plies(ctx)
	if err != nil {
		w.log.Warn("reading ply records to recover a stalled run failed", "err", err)
		return nil, false
	}
	return plies, true
}

// sameRecords reports whether two reads of the ply records (by ply)
// found the same plies, none of them rewritten in between.
func sameRecords(a, b map[int]*runstore.Ply) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if !sameRecord(a, b, n) {
			return false
		}
	}
	return true
}

// sameRecord reports whether ply n's record, as read in a, is in b and
// was not rewritten in between (its ETag is the same).
func sameRecord(a, b map[int]*runstore.Ply, n int) bool {
	q, ok := b[n]
	return ok && q.ETag == a[n].ETag
}

// byPly indexes ply records by ply.
func byPly(plies []*runstore.Ply) map[int]*runstore.Ply {
	m := make(map[int]*runstore.Ply, len(plies))
	for _, p := range plies {
		m[p.Ply] = p
	}
	return m
}

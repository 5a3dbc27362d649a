package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// releaseExpired frees the runs of every claim older than the claim
// timeout, so that a ply whose merge message was lost or poisoned does not
// wait forever: the scan then plans those runs again under a new claim.
//
// Safety: the release rewrites the claimed records in one ETag-guarded
// transaction per claim, so their ETags change. The old merge, if it is
// still alive, commits by deleting its inputs under the ETags it read, so
// its commit now fails and it never adds its outputs: the runs are merged
// once. It fails its commit anyway once it has run longer than its
// compensation delay (compensation.ErrExpired), and the claim timeout is
// longer than that, so a merge that started promptly is never released
// while it could still commit. If the old merge committed first, its inputs
// are gone and the release fails with ErrNotFound or a precondition
// failure, and is skipped. A released merge's output blobs are covered by
// its compensation messages, which delete them since no record names them.
//
// Crash points: the release of one claim is a single transaction; a crash
// before it changes nothing, and a crash after it leaves free runs that
// any later scan claims. Claims without a time (from before claims had
// one) never expire.
func (t *task) releaseExpired(ctx context.Context, ply int, recs []*rangeRecord) error {
	now := time.Now()
	expired := map[string][]*rangeRecord{}
	var order []string
	for _, rr := range recs {
		if !rr.Merging || rr.Claimed == 0 || now.Sub(time.Unix(0, rr.Claimed)) <= t.cfg.ClaimTimeout {
			continue
		}
		if _, ok := expired[rr.Owner]; !ok {
			order = append(order, rr.Owner)
		}
		expired[rr.Owner] = append(expired[rr.Owner], rr)
	}
	for _, claim := range order {
		rs := expired[claim]
		for lo := 0; lo < len(rs); lo += storage.MaxBatchOps {
			batch := rs[lo:min(len(rs), lo+storage.MaxBatchOps)]
			ops := make([]storage.Op, len(batch))
			for i, rr := range batch {
				free := *rr
				free.Merging, free.Owner, free.Claimed = false, "", 0
				ops[i] = storage.Op{Kind: storage.OpUpdate, Entity: free.entity(ply), ETag: rr.ETag}
			}
			etags, err := t.run.state.Transact(ctx, pkRecords(ply), ops)
			if errors.Is(err, storage.ErrPreconditionFailed) || errors.Is(err, storage.ErrNotFound) {
				break // the merge committed, or another scan released the claim, meanwhile
			}
			if err != nil {
				return fmt.Errorf("releasing expired claim %s of ply %d: %w", claim, ply, err)
			}
			for i, rr := range batch {
				rr.Merging, rr.Owner, rr.Claimed, rr.ETag = false, "", 0, etags[i]
			}
		}
		if t.log != nil {
			t.log.Warn("released an expired claim: its merge message was lost or poisoned", "claim", claim, "runs", len(rs), "timeout", t.cfg.ClaimTimeout)
		}
	}
	return nil
}

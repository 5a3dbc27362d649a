package dedup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// ScanHandler handles S messages: once a ply is Merging, it claims each
// group of overlapping runs with one ETag-guarded transaction and enqueues
// a merge naming the claim. When nothing is left to merge, it reports the
// ply merged to the flow, which makes it Final. After the first scan each
// merge plans its own bucket's next merges (planBucket), so scans run at
// the start and the end of a ply's merging, and when a stalled run is
// nudged.
//
// Crash points: claims carry this attempt's tag, so a redelivery first
// re-enqueues merges for the claims an earlier attempt of the same message
// made but may not have enqueued; a merge enqueued twice commits once (its
// commit is guarded by the inputs' ETags). The bucket count is recorded
// before any claim, so it exists before any merge runs.
var ScanHandler task.Handler = task.HandlerFunc(scan)

func scan(ctx context.Context, t *task.Task, m message.Message) error {
	store := t.Run.Store
	p, err := store.Ply(ctx, m.Ply)
	if err != nil {
		return err
	}
	switch {
	case p.State < runstore.Merging:
		return nil // expansion goes on; its last task starts the scan
	case p.State >= runstore.Final:
		return t.Flow.Merged(ctx, t, p, nil) // a redelivery may owe the follow-up
	}
	runs, err := store.Runs(ctx, m.Ply)
	if err != nil {
		return err
	}
	// The first scan records the bucket count; later ones (the last one,
	// and nudges) find it and need not read the splitters again.
	if _, err := store.BucketCount(ctx, m.Ply); errors.Is(err, storage.ErrNotFound) {
		buckets := map[int]bool{}
		for _, r := range runs {
			buckets[r.Bucket] = true
		}
		splitters, err := ReadSplitters(ctx, t.Run, m.Ply)
		if err != nil {
			return err
		}
		if err := store.SetBuckets(ctx, m.Ply, len(splitters)+1, buckets); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	complete, err := plan(ctx, t, m.Ply, runs)
	if err != nil || !complete {
		return err
	}
	return t.Flow.Merged(ctx, t, p, runs)
}

// plan claims the next merges among runs (a whole ply, or one bucket of
// it) and enqueues them. It reports complete when no run overlaps another,
// none is claimed and all are final: there is nothing left to merge.
func plan(ctx context.Context, t *task.Task, ply int, runs []*runstore.Run) (complete bool, err error) {
	run := t.Run
	if err := releaseExpired(ctx, t, ply, runs); err != nil {
		return false, err
	}
	byKey := map[string]*runstore.Run{}
	var stale []runstore.Claim
	for _, r := range runs {
		byKey[r.Key] = r
		if c := r.Claim; c != nil && t.IsAttemptOf(c.Attempt) && c.Attempt != t.Attempt() && !slices.Contains(stale, *c) {
			stale = append(stale, *c)
		}
	}
	for _, c := range stale {
		if err := run.Enqueue(ctx, message.Message{Kind: message.KindMerge, Ply: ply, Claim: c}); err != nil {
			return false, err
		}
	}
	records := toRecords(runs)
	maxEntries := int64(run.BlobPositions) * int64(maxOutputs(run.FanIn))
	groups, rest := Whole(records, run.FanIn, maxEntries)
	more, complete := Plan(rest, run.FanIn, maxEntries)
	groups = append(groups, more...)
	grouped := map[string]bool{}
	for _, g := range groups {
		for _, id := range g.IDs {
			grouped[id] = true
		}
	}
	// A run that overlaps nothing still holds edges, not final positions:
	// it is finalized by a merge of one.
	overlapping := overlappingKeys(runs)
	for _, r := range runs {
		if !r.Final && r.Claim == nil && !grouped[r.Key] && !overlapping[r.Key] {
			groups = append(groups, Group{IDs: []string{r.Key}, Final: true, Count: r.Count})
		}
	}
	if complete && len(groups) == 0 {
		for _, r := range runs {
			if !r.Final {
				return false, nil
			}
		}
		return true, nil
	}
	for gi, g := range groups {
		members := make([]*runstore.Run, len(g.IDs))
		for i, id := range g.IDs {
			members[i] = byKey[id]
		}
		// Groups never span buckets: runs of different buckets do not overlap.
		c := runstore.Claim{Attempt: t.Attempt(), Group: gi, Bucket: members[0].Bucket, Final: g.Final}
		if err := run.Store.ClaimRuns(ctx, ply, c, members, t.Now()); err != nil {
			if errors.Is(err, runstore.ErrConflict) {
				continue // another scan claimed some of these runs first
			}
			return false, err
		}
		if err := run.Enqueue(ctx, message.Message{Kind: message.KindMerge, Ply: ply, Claim: c}); err != nil {
			return false, err
		}
	}
	return false, nil
}

// maxOutputs is how many output runs a merge may write: its commit deletes
// up to fanIn inputs and adds the outputs and a statistics row in one
// transaction of at most 100 operations; half of the rest, as outputs are
// rarely full.
func maxOutputs(fanIn int) int { return (100 - fanIn - 4) / 2 }

func toRecords(runs []*runstore.Run) []Record {
	out := make([]Record, len(runs))
	for i, r := range runs {
		out[i] = Record{ID: r.Key, Min: r.Min, Max: r.Max, Created: r.Created, Count: r.Count, Merging: r.Claim != nil}
	}
	return out
}

// overlappingKeys finds the runs that overlap another, with one sweep in
// order of Min.
func overlappingKeys(runs []*runstore.Run) map[string]bool {
	out := map[string]bool{}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *runstore.Run) int { return board.Compare(a.Min, b.Min) })
	var reach *runstore.Run // the run seen so far with the largest Max
	for _, r := range sorted {
		if reach != nil && board.Compare(r.Min, reach.Max) <= 0 {
			out[r.Key], out[reach.Key] = true, true
		}
		if reach == nil || board.Compare(r.Max, reach.Max) > 0 {
			reach = r
		}
	}
	return out
}

// planBucket runs after a merge in a bucket commits: it plans the bucket's
// next merges from the bucket's own runs, so a merge costs a listing of
// its bucket rather than of the whole ply. When the bucket has nothing
// left to merge it marks the bucket complete, and once every bucket is
// complete it enqueues the scan that finishes the ply.
//
// Crash points: as for scan; the complete marker is added idempotently (a
// complete bucket never changes again: none of its runs is claimed, so
// none is released or merged); the final scan may be enqueued more than
// once, which is harmless.
func planBucket(ctx context.Context, t *task.Task, ply, bucket int) error {
	store := t.Run.Store
	runs, err := store.BucketRuns(ctx, ply, bucket)
	if err != nil {
		return err
	}
	complete, err := plan(ctx, t, ply, runs)
	if err != nil || !complete {
		return err
	}
	all, err := store.MarkBucketComplete(ctx, ply, bucket)
	if err != nil || !all {
		return err
	}
	return t.Run.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: ply})
}

// releaseExpired frees the runs of every claim older than the claim
// timeout, so that a ply whose merge message was lost or poisoned does not
// wait forever: the scan then plans those runs again under a new claim.
//
// Safety: the release rewrites the claimed runs under their ETags, so the
// old merge, if it is still alive, fails its commit (which deletes its
// inputs under the ETags it read) and never adds its outputs: the runs are
// merged once. It fails its commit anyway once it has run longer than its
// compensation delay (compensation.ErrExpired), and the claim timeout is
// longer than that, so a merge that started promptly is never released
// while it could still commit. If the old merge committed first, the
// release fails with ErrConflict and is skipped. A released merge's output
// blobs are covered by its compensation messages.
//
// Crash points: the release of one claim is one transaction per 100 runs;
// a crash between them leaves some runs claimed, which the next scan
// releases.
func releaseExpired(ctx context.Context, t *task.Task, ply int, runs []*runstore.Run) error {
	now := t.Now()
	expired := map[runstore.Claim][]*runstore.Run{}
	var order []runstore.Claim
	for _, r := range runs {
		if r.Claim == nil || now.Sub(time.Unix(0, r.Claimed)) <= t.Timing.ClaimTimeout {
			continue
		}
		if _, ok := expired[*r.Claim]; !ok {
			order = append(order, *r.Claim)
		}
		expired[*r.Claim] = append(expired[*r.Claim], r)
	}
	for _, c := range order {
		rs := expired[c]
		err := t.Run.Store.ReleaseRuns(ctx, ply, rs)
		if errors.Is(err, runstore.ErrConflict) {
			continue // the merge committed, or another scan released the claim, meanwhile
		}
		if err != nil {
			return fmt.Errorf("releasing expired claim %s: %w", c, err)
		}
		t.Log.Warn("released an expired claim: its merge message was lost or poisoned", "claim", c.String(), "runs", len(rs), "timeout", t.Timing.ClaimTimeout)
	}
	return nil
}

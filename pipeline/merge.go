package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/storage"
)

// sampleKeys is how many positions a final record keeps as samples for
// choosing the next ply's splitters.
const sampleKeys = 256

// scan plans a ply's merges once all its expansion tasks are done: it
// claims each group of overlapping runs with one ETag-guarded transaction
// and enqueues a merge message naming the claim. When no runs overlap and
// all are final, it completes the ply. After the first scan, each merge
// plans the next merges of its own bucket (planBucket), so scans run only
// at the start and the end of a ply's merging, not after every merge.
//
// Crash points: claims carry this attempt's id, so a redelivery first
// re-enqueues merges for claims an earlier attempt of the same message made
// but may not have enqueued; a claim whose merge message is enqueued twice
// is merged once (the merge commits with ETags). The bucket count is added
// before any claim, so it exists before any merge runs. Completing the ply
// is one ETag-guarded transaction; its owner's redelivery finishes the
// sweep and the dispatch.
func (t *task) scan(ctx context.Context, m Message) error {
	r := t.run
	ply, err := r.getPly(ctx, m.Ply)
	if err != nil {
		return err
	}
	mine := claimID(t.msg.ID, 0)
	if ply.State == plyComplete {
		if ply.Owner == mine && !ply.Dispatched {
			// The attempt that completed the ply may have failed before
			// its sweep as well as before its dispatch; both are
			// idempotent, so repeat both (without the sweep the ply's
			// expansion runs would stay forever).
			if err := r.sweep(ctx, ply); err != nil {
				return err
			}
			return r.dispatch(ctx, ply)
		}
		return nil
	}
	done, err := queryAll(ctx, r.state, pkRecords(m.Ply), "d", "e")
	if err != nil {
		return err
	}
	if len(done) < ply.Tasks {
		return nil
	}
	recs, err := r.listRecords(ctx, m.Ply)
	if err != nil {
		return err
	}
	if err := r.countBuckets(ctx, m.Ply, recs); err != nil {
		return err
	}
	complete, err := t.plan(ctx, m.Ply, recs)
	if err != nil || !complete {
		return err
	}
	return r.finishPly(ctx, ply, recs, mine)
}

// countBuckets records how many buckets hold runs, so that the merges can
// tell when the last bucket is complete. Every bucket keeps at least one
// run until the ply completes (a merge replaces its inputs with outputs in
// the same bucket), so every scan counts the same number, and adding it
// again is harmless.
func (r *Run) countBuckets(ctx context.Context, ply int, recs []*rangeRecord) error {
	buckets := map[int]bool{}
	for _, rr := range recs {
		b, ok := recordBucket(rr.ID)
		if !ok {
			return nil // runs without buckets: completion is left to scans
		}
		buckets[b] = true
	}
	_, err := r.state.Add(ctx, storage.Entity{PartitionKey: pkRecords(ply), RowKey: rkBuckets, Props: map[string]any{"Buckets": int64(len(buckets))}})
	if err != nil && !errors.Is(err, storage.ErrExists) {
		return fmt.Errorf("counting the buckets of ply %d: %w", ply, err)
	}
	return nil
}

// plan claims the next merges among recs (a whole ply, or one bucket of
// it) and enqueues them. It reports complete when no run overlaps another,
// none is being merged and all are final: there is nothing left to merge.
func (t *task) plan(ctx context.Context, ply int, recs []*rangeRecord) (complete bool, err error) {
	r := t.run
	mine := claimID(t.msg.ID, 0)
	if err := t.releaseExpired(ctx, ply, recs); err != nil {
		return false, err
	}
	byID := map[string]*rangeRecord{}
	stale := map[string]bool{}
	for _, rr := range recs {
		byID[rr.ID] = rr
		if rr.Merging && len(rr.Owner) > len(mine) && rr.Owner[:len(mine)] == mine && rr.Owner != claimID(t.msg.ID, t.msg.DequeueCount) {
			stale[rr.Owner] = true
		}
	}
	for owner := range stale {
		final := owner[len(owner)-1] == 'f'
		if err := r.enqueue(ctx, Message{Kind: KindMerge, Ply: ply, Final: final, IDs: []string{owner}}); err != nil {
			return false, err
		}
	}
	maxEntries := int64(r.Config.BlobPositions) * int64(storage.MaxBatchOps-r.Config.FanIn-4) / 2
	groups, rest := dedup.Whole(toDedup(recs), r.Config.FanIn, maxEntries)
	more, complete := dedup.Plan(rest, r.Config.FanIn, maxEntries)
	groups = append(groups, more...)
	grouped := map[string]bool{}
	for _, g := range groups {
		for _, id := range g.IDs {
			grouped[id] = true
		}
	}
	// A run that overlaps nothing still holds edges, not final positions:
	// it is finalized by a merge of one.
	overlapping := overlappingIDs(recs)
	for _, rr := range recs {
		if !rr.Final && !rr.Merging && !grouped[rr.ID] && !overlapping[rr.ID] {
			groups = append(groups, dedup.Group{IDs: []string{rr.ID}, Final: true, Count: rr.Count})
		}
	}
	if complete && len(groups) == 0 {
		for _, rr := range recs {
			if !rr.Final {
				return false, nil
			}
		}
		return true, nil
	}
	attempt := claimID(t.msg.ID, t.msg.DequeueCount)
	for gi, g := range groups {
		// Groups never span buckets: runs of different buckets do not overlap.
		bucket, ok := recordBucket(g.IDs[0])
		if !ok {
			bucket = -1
		}
		claim := claimName(attempt, gi, bucket, g.Final)
		ops := make([]storage.Op, 0, len(g.IDs))
		for _, id := range g.IDs {
			rr := *byID[id]
			rr.Merging, rr.Owner, rr.Claimed = true, claim, time.Now().UnixNano()
			ops = append(ops, storage.Op{Kind: storage.OpUpdate, Entity: rr.entity(ply), ETag: rr.ETag})
		}
		if _, err := r.state.Transact(ctx, pkRecords(ply), ops); err != nil {
			if errors.Is(err, storage.ErrPreconditionFailed) || errors.Is(err, storage.ErrNotFound) {
				continue // another scan claimed some of these runs first
			}
			return false, fmt.Errorf("claiming runs of ply %d: %w", ply, err)
		}
		if err := r.enqueue(ctx, Message{Kind: KindMerge, Ply: ply, Final: g.Final, IDs: []string{claim}}); err != nil {
			return false, err
		}
	}
	return false, nil
}

// planBucket runs after a merge in a bucket commits: it plans the bucket's
// next merges from the bucket's own records, so a merge costs a listing of
// its bucket rather than of the whole ply. When the bucket has nothing
// left to merge it marks the bucket complete, and once every bucket is
// complete it enqueues the scan that completes the ply.
//
// Crash points: as for scan, claims carry the attempt's id and a
// redelivery re-enqueues an earlier attempt's claims; the complete marker
// is added idempotently (a complete bucket never changes again: none of
// its runs is claimed, so none is released or merged); the final scan may
// be enqueued more than once, which is harmless.
func (t *task) planBucket(ctx context.Context, ply, bucket int) error {
	r := t.run
	recs, err := r.listBucket(ctx, ply, bucket)
	if err != nil {
		return err
	}
	complete, err := t.plan(ctx, ply, recs)
	if err != nil || !complete {
		return err
	}
	pk := pkRecords(ply)
	if _, err := r.state.Add(ctx, storage.Entity{PartitionKey: pk, RowKey: bucketDone(bucket), Props: map[string]any{}}); err != nil && !errors.Is(err, storage.ErrExists) {
		return fmt.Errorf("marking bucket %d of ply %d complete: %w", bucket, ply, err)
	}
	count, err := r.state.Get(ctx, pk, rkBuckets)
	if errors.Is(err, storage.ErrNotFound) {
		// The scans did not count the buckets (the ply also holds runs
		// from before runs carried their bucket): let a scan decide.
		return r.enqueue(ctx, Message{Kind: KindScan, Ply: ply})
	}
	if err != nil {
		return fmt.Errorf("reading the bucket count of ply %d: %w", ply, err)
	}
	doneBuckets, err := queryAll(ctx, r.state, pk, "c", "d")
	if err != nil {
		return err
	}
	if int64(len(doneBuckets)) < propInt(count, "Buckets") {
		return nil
	}
	return r.enqueue(ctx, Message{Kind: KindScan, Ply: ply})
}

// overlappingIDs finds the records that overlap another, with one sweep
// in order of Min.
func overlappingIDs(recs []*rangeRecord) map[string]bool {
	out := map[string]bool{}
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, func(a, b *rangeRecord) int { return board.Compare(a.Min, b.Min) })
	var reach *rangeRecord // the record seen so far with the largest Max
	for _, rr := range sorted {
		if reach != nil && board.Compare(rr.Min, reach.Max) <= 0 {
			out[rr.ID], out[reach.ID] = true, true
		}
		if reach == nil || board.Compare(rr.Max, reach.Max) > 0 {
			reach = rr
		}
	}
	return out
}

// finishPly completes a ply whose runs are all final and disjoint, sweeps
// the ply's other blobs, and dispatches the next work.
func (r *Run) finishPly(ctx context.Context, ply *plyRecord, recs []*rangeRecord, owner string) error {
	stats, err := queryAll(ctx, r.state, pkRecords(ply.Ply), "d", "e")
	if err != nil {
		return err
	}
	ply.Edges = 0
	for _, e := range stats {
		ply.Edges += propInt(e, "Edges")
	}
	xs, err := queryAll(ctx, r.state, pkRecords(ply.Ply), "x", "y")
	if err != nil {
		return err
	}
	ply.Merges, ply.BlobReads, ply.Merged = 0, 0, 0
	for _, e := range xs {
		ply.Merges++
		ply.BlobReads += propInt(e, "Reads")
		ply.Merged += propInt(e, "Entries")
	}
	if err := r.completePly(ctx, ply, recs, owner, false); err != nil {
		if errors.Is(err, storage.ErrPreconditionFailed) {
			return nil // another scan completed the ply first
		}
		return err
	}
	done, err := r.getPly(ctx, ply.Ply)
	if err != nil {
		return err
	}
	if err := r.sweep(ctx, done); err != nil {
		return err
	}
	return r.dispatch(ctx, done)
}

// sweep deletes a complete ply's blobs that no final record names: the
// expansion runs and intermediate merges it no longer needs.
func (r *Run) sweep(ctx context.Context, p *plyRecord) error {
	keep := map[string]bool{}
	for _, b := range p.Blobs {
		keep[b] = true
	}
	list, err := r.blobs.List(ctx, blobFor(p.Ply, ""))
	if err != nil {
		return fmt.Errorf("listing ply %d blobs: %w", p.Ply, err)
	}
	for _, b := range list {
		if keep[b.Name] || isResultBlob(b.Name) {
			continue
		}
		if err := r.blobs.Delete(ctx, b.Name); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("deleting %s: %w", b.Name, err)
		}
	}
	return nil
}

// merge handles an M message: it k-way merges the runs its claim owns
// into one run (partial) or into final blobs of distinct positions with
// their backtracking rows (final), then swaps the records in one
// transaction: inputs deleted with their ETags, outputs and a statistics
// row added. Then it plans its bucket's next merges (planBucket); a claim
// without a bucket enqueues a scan instead.
//
// Crash points: output blobs (and their backtracking rows) have names
// unique to this attempt (attemptTag), so a retry writes its own, and a
// compensation message covers each until the swap commits, deleting it
// if the swap never names it, even while a retry runs; if the swap
// already committed (the claim's statistics row exists) the retry only
// repeats the follow-up, which is idempotent.
func (t *task) merge(ctx context.Context, m Message) error {
	r := t.run
	claim := m.IDs[0]
	bucket, bucketed := claimBucket(claim)
	next := func() error {
		if bucketed {
			return t.planBucket(ctx, m.Ply, bucket)
		}
		return r.enqueue(ctx, Message{Kind: KindScan, Ply: m.Ply})
	}
	if _, err := r.state.Get(ctx, pkRecords(m.Ply), mergeStatID(claim)); err == nil {
		return next()
	}
	var recs []*rangeRecord
	var err error
	if bucketed {
		recs, err = r.listBucket(ctx, m.Ply, bucket)
	} else {
		recs, err = r.listRecords(ctx, m.Ply)
	}
	if err != nil {
		return err
	}
	var inputs []*rangeRecord
	for _, rr := range recs {
		if rr.Merging && rr.Owner == claim {
			inputs = append(inputs, rr)
		}
	}
	if len(inputs) == 0 {
		return nil // nothing owned by this claim: a stale or duplicate message
	}
	readers := make([]*dedup.Reader, len(inputs))
	for i, in := range inputs {
		rc, err := r.blobs.Open(ctx, in.Blob, in.Off, in.Len)
		if err != nil {
			return fmt.Errorf("opening run %s: %w", in.ID, err)
		}
		defer rc.Close()
		if in.Final {
			return fmt.Errorf("run %s of ply %d is final and overlaps another run: the ply's records are inconsistent", in.ID, m.Ply)
		}
		readers[i] = dedup.NewReaderSize(rc, in.Len)
	}
	out := &mergeOutput{t: t, ply: m.Ply, claim: claim, final: m.Final}
	read, err := dedup.Merge(readers, out.add)
	if err != nil {
		return fmt.Errorf("merging runs of ply %d: %w", m.Ply, err)
	}
	if err := out.close(ctx); err != nil {
		return err
	}
	ops := make([]storage.Op, 0, len(inputs)+len(out.records)+1)
	for _, in := range inputs {
		ops = append(ops, storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pkRecords(m.Ply), RowKey: in.ID}, ETag: in.ETag})
	}
	for _, o := range out.records {
		ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: o.entity(m.Ply)})
	}
	ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pkRecords(m.Ply), RowKey: mergeStatID(claim), Props: map[string]any{
		"Reads": int64(len(inputs)), "Entries": read, "Outputs": int64(len(out.records)),
	}}})
	if _, err := r.state.Transact(ctx, pkRecords(m.Ply), ops); err != nil {
		if _, gerr := r.state.Get(ctx, pkRecords(m.Ply), mergeStatID(claim)); gerr != nil {
			return fmt.Errorf("committing merge %s of ply %d: %w", claim, m.Ply, err)
		}
		// Another attempt of this claim committed (or ours did and its
		// answer was lost). Our outputs may then be no record's, as they
		// carry our attempt's tag: let the compensation decide.
		out.comps = nil
	}
	for _, c := range out.comps {
		c.done(ctx)
	}
	t.merges.Add(1)
	return next()
}

// mergeOutput receives merged entries in order and writes the outputs.
type mergeOutput struct {
	t     *task
	ply   int
	claim string
	final bool

	records []*rangeRecord
	comps   []*pendingComp

	// partial output
	data []byte
	// final output: the current chunk
	keys     []byte
	sources  []byte
	count    int64
	terminal int64
	first    board.Position
	last     board.Position
	pending  bool
	cur      board.Position
	refs     []backtrack.Ref
	minE     dedup.Entry
	nEntries int64
}

func (o *mergeOutput) add(e dedup.Entry) error {
	if !o.final {
		if o.nEntries == 0 {
			o.minE = e
		}
		o.nEntries++
		o.data = dedup.AppendEntry(o.data, e)
		o.last = e.Pos
		return nil
	}
	if o.pending && e.Pos == o.cur {
		o.refs = appendRef(o.refs, e.Ref)
		return nil
	}
	if o.pending {
		if err := o.emit(); err != nil {
			return err
		}
	}
	o.pending, o.cur = true, e.Pos
	o.refs = appendRef(o.refs[:0], e.Ref)
	return nil
}

func appendRef(refs []backtrack.Ref, r dedup.Ref) []backtrack.Ref {
	return append(refs, backtrack.Ref{Blob: r.Blob, Index: r.Index})
}

// emit adds the pending position to the current final chunk.
func (o *mergeOutput) emit() error {
	if o.count == 0 {
		o.first = o.cur
	}
	o.keys = o.cur.AppendKey(o.keys)
	o.sources = backtrack.AppendSources(o.sources, o.refs)
	if o.t.run.Board.Terminal(o.cur) {
		o.terminal++
	}
	o.last = o.cur
	o.count++
	if o.count >= int64(o.t.run.Config.BlobPositions) {
		return o.flushChunk(context.Background())
	}
	return nil
}

func (o *mergeOutput) flushChunk(ctx context.Context) error {
	if o.count == 0 {
		return nil
	}
	r := o.t.run
	k := len(o.records)
	name := blobFor(o.ply, fmt.Sprintf("f-%s-%04d-%s", o.claim, k, o.t.attemptTag()))
	comp, err := o.t.compensate(ctx, o.ply, name)
	if err != nil {
		return err
	}
	o.comps = append(o.comps, comp)
	if err := r.blobs.Upload(ctx, name, bytes.NewReader(o.keys)); err != nil {
		return fmt.Errorf("writing final blob %s: %w", name, err)
	}
	if err := r.writeSources(ctx, name, o.sources); err != nil {
		return err
	}
	if err := comp.check(); err != nil {
		return err
	}
	o.records = append(o.records, &rangeRecord{
		ID: outputID(o.claim, k), Blob: name, Len: int64(len(o.keys)), Count: o.count,
		Min: o.first, Max: o.last, Created: time.Now().UnixNano(), Final: true, Terminal: o.terminal,
		Samples: sampleOf(o.keys, sampleKeys),
	})
	o.keys, o.sources, o.count, o.terminal = o.keys[:0], o.sources[:0], 0, 0
	return nil
}

func (o *mergeOutput) close(ctx context.Context) error {
	if o.final {
		if o.pending {
			if err := o.emit(); err != nil {
				return err
			}
			o.pending = false
		}
		return o.flushChunk(ctx)
	}
	if o.nEntries == 0 {
		return nil
	}
	r := o.t.run
	name := blobFor(o.ply, "m-"+o.claim+"-"+o.t.attemptTag())
	comp, err := o.t.compensate(ctx, o.ply, name)
	if err != nil {
		return err
	}
	o.comps = append(o.comps, comp)
	if err := r.blobs.Upload(ctx, name, bytes.NewReader(o.data)); err != nil {
		return fmt.Errorf("writing merged run %s: %w", name, err)
	}
	if err := comp.check(); err != nil {
		return err
	}
	o.records = append(o.records, &rangeRecord{
		ID: outputID(o.claim, 0), Blob: name, Len: int64(len(o.data)), Count: o.nEntries,
		Min: o.minE.Pos, Max: o.last, Created: time.Now().UnixNano(),
	})
	return nil
}

// sampleOf picks up to n evenly spaced keys from a sorted key list.
func sampleOf(keys []byte, n int) []byte {
	total := len(keys) / board.KeyLen
	if total <= n {
		return append([]byte(nil), keys...)
	}
	out := make([]byte, 0, n*board.KeyLen)
	for i := 0; i < n; i++ {
		k := i * total / n
		out = append(out, keys[k*board.KeyLen:(k+1)*board.KeyLen]...)
	}
	return out
}

// writeSources stores the backtracking rows of one final blob: for each of
// its positions, in order, the parents that lead to it. The partition is
// the blob's own, and every row is an idempotent upsert.
func (r *Run) writeSources(ctx context.Context, blob string, payload []byte) error {
	ctx = withCategory(ctx, CategoryBacktrack)
	rows := backtrack.SplitRows(payload)
	pk := backPartition(blob)
	for i := 0; i < len(rows); i += backtrack.RowsPerBatch {
		var ops []storage.Op
		for k := i; k < min(len(rows), i+backtrack.RowsPerBatch); k++ {
			ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%04d", k), Props: rows[k]}})
		}
		if _, err := r.back.Transact(ctx, pk, ops); err != nil {
			return fmt.Errorf("writing backtracking rows of %s: %w", blob, err)
		}
	}
	return nil
}

// readSources reads the backtracking rows of one final blob.
func (r *Run) readSources(ctx context.Context, blob string) ([]byte, error) {
	ctx = withCategory(ctx, CategoryBacktrack)
	es, err := queryAll(ctx, r.back, backPartition(blob), "", "")
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, e := range es {
		b, err := backtrack.JoinRow(e.Props)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

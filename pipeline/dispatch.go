package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// The follow-ups that grow with a ply, fanned out. A Final ply's
// follow-up (sweep its spent blobs, enqueue the next work on each final
// blob) and a Resolved ply's (enqueue the previous ply's resolution)
// touch every final blob of a ply: 12.6 million at 8x8 ply 18. Each is
// cut into leaves of at most runstore.DispatchFan units
// (runstore/dispatch.go), and the leaves are reached through a tree of
// ranges: the owner's follow-up handles the range of every leaf, and a
// range of more than one leaf is cut into at most DispatchFan parts,
// each enqueued as a D (or B) message, which does the same. So every
// handling does O(DispatchFan) storage calls, the tree is
// O(log n) deep, and a ply of one leaf (up to 64 units: final blobs,
// buckets and tasks together) is done in the owner's own follow-up, with
// no message more than before.
//
// Crash points: a leaf is an item of its stage (runstore.Stage) and
// task.Do carries it: a leaf found done is skipped, and its work
// (deleting spent blobs, enqueuing messages) is idempotent, so a
// redelivery repeats what a crash cut short. A range's message is its
// leaves, so a redelivery or a duplicate enqueues the same parts again,
// which find their leaves done. The leaf whose marker completes the stage
// makes the ply's transition (NextEnqueued, PreviousEnqueued), once.

// fanOut is one of the fanned-out follow-ups.
type fanOut struct {
	kind  message.Kind
	stage func(*runstore.Store, *runstore.Ply) runstore.Stage[runstore.Dispatch]
	// leaf does leaf of ply p.
	leaf func(r *Run, ctx context.Context, p *runstore.Ply, leaf int) error
	// event is what the leaves' stage ends in; then makes the
	// transition, once every leaf is done, and does what follows it.
	event runstore.Event
	then  func(r *Run, ctx context.Context, p *runstore.Ply, c runstore.Claim) error
}

// dispatch is a Final ply's follow-up, fanned out. (Functions, not
// variables: the follow-ups refer to each other.)
func dispatch() fanOut {
	return fanOut{kind: message.KindDispatch, stage: (*runstore.Store).DispatchStage,
		leaf: (*Run).dispatchLeaf, event: runstore.NextEnqueued, then: (*Run).dispatched}
}

// back is a Resolved ply's follow-up, fanned out.
func back() fanOut {
	return fanOut{kind: message.KindBack, stage: (*runstore.Store).BackStage,
		leaf: (*Run).backLeaf, event: runstore.PreviousEnqueued, then: (*Run).closed}
}

// FanOut handles a D or B message: the range of leaves it names.
func (f flow) FanOut(ctx context.Context, t *task.Task, m message.Message) error {
	var fo fanOut
	switch m.Kind {
	case message.KindDispatch:
		fo = dispatch()
	case message.KindBack:
		fo = back()
	default:
		return message.Badf("%s messages are not the flow's", m.Kind)
	}
	p, err := f.r.store.Ply(ctx, m.Ply)
	if err != nil {
		return err
	}
	return fo.span(ctx, f.r, p, runstore.Span{Lo: m.Index, Hi: m.End}, t.Claim())
}

// span does the leaves in s of p's stage: the one leaf, or, for more,
// enqueues each of at most DispatchFan parts of s.
func (f fanOut) span(ctx context.Context, r *Run, p *runstore.Ply, s runstore.Span, c runstore.Claim) error {
	st := f.stage(r.store, p)
	if s.Hi-s.Lo == 1 {
		return task.Do(ctx, task.Item[runstore.Dispatch]{
			Stage: st, Index: s.Lo,
			Work: func(ctx context.Context) (runstore.Dispatch, task.Cover, error) {
				return runstore.Dispatch{Leaf: s.Lo}, nil, f.leaf(r, ctx, p, s.Lo)
			},
			FollowUp: func(ctx context.Context) error { return f.done(ctx, r, st, s.Lo, c) },
		})
	}
	past, err := st.Check(s.Lo)
	switch {
	case err == nil && s.Hi > st.Items():
		err = fmt.Errorf("ply %d has %d leaves, not %d", p.Ply, st.Items(), s.Hi)
		fallthrough
	case err != nil:
		return message.Badf("%v", err)
	case past:
		return nil // every leaf is done
	}
	n := s.Hi - s.Lo
	parts := min(n, runstore.DispatchFan)
	for i := range parts {
		part := runstore.SpanOf(i, n, parts)
		if err := r.shared.Enqueue(ctx, message.Message{Kind: f.kind, Ply: p.Ply, Index: s.Lo + part.Lo, End: s.Lo + part.Hi}); err != nil {
			return err
		}
	}
	return nil
}

// done follows a done leaf: the leaf that completes the stage moves the
// ply on. A later delivery finds the ply moved on, and may owe what
// followed (the Resolved ply's follow-up, after dispatched resolved it).
func (f fanOut) done(ctx context.Context, r *Run, st runstore.Stage[runstore.Dispatch], leaf int, c runstore.Claim) error {
	p := st.Ply()
	if !p.Awaits(f.event) {
		return r.followUp(ctx, p, c)
	}
	if all, err := st.AllDone(ctx, leaf); err != nil || !all {
		return err
	}
	return f.then(r, ctx, p, c)
}

// all does every leaf of p's stage, from the follow-up that owes them.
func (f fanOut) all(ctx context.Context, r *Run, p *runstore.Ply, c runstore.Claim) error {
	return f.span(ctx, r, p, runstore.Span{Lo: 0, Hi: f.stage(r.store, p).Items()}, c)
}

// dispatchLeaf enqueues the next work on the final blobs of leaf's units
// of a Final ply, then sweeps their spent blobs. In that order: the next
// work reads none of the spent blobs, and deleting them (on one machine,
// an unlink of up to gigabytes each: seconds for 8x8 ply 14's expansion runs)
// need not hold it up. A redelivery after a crash between the two
// enqueues the work again, which finds its markers, and sweeps.
func (r *Run) dispatchLeaf(ctx context.Context, p *runstore.Ply, leaf int) error {
	u := p.DispatchLeaf(leaf)
	if err := r.enqueueNext(ctx, p, u); err != nil {
		return err
	}
	return r.sweep(ctx, p, u)
}

// enqueueNext enqueues the next work on the final blobs of units u of a
// Final ply, having written their rows.
func (r *Run) enqueueNext(ctx context.Context, p *runstore.Ply, u runstore.DispatchUnits) error {
	if p.Positions == 0 || u.Finals.Lo >= u.Finals.Hi {
		// With no positions, every position of the previous ply was
		// terminal: there is nothing to expand, and results start
		// flowing back from here.
		return nil
	}
	// The leaf's final blob rows go first: the work it enqueues reads
	// them. They depend only on the ply's committed merges, so a
	// redelivery writes the same.
	finals, err := r.store.FinalsFor(ctx, p, u.Finals)
	if err != nil {
		return err
	}
	if err := r.store.PutFinals(ctx, p.Ply, finals); err != nil {
		return err
	}
	if p.Ply >= r.Config.Target {
		return r.enqueueResolves(ctx, p.Ply, finals)
	}
	if p.Finals == 1 && p.Positions <= message.InlineLimit {
		keys, err := r.shared.ReadKeys(ctx, finals[0].Blob)
		if err != nil {
			return err
		}
		return r.shared.Enqueue(ctx, message.Message{Kind: message.KindInline, Ply: p.Ply, Positions: keys})
	}
	for _, f := range finals {
		if err := r.shared.Enqueue(ctx, message.Message{Kind: message.KindChunk, Ply: p.Ply, Index: f.Index, Blob: f.Blob}); err != nil {
			return err
		}
	}
	return nil
}

// sweep deletes the blobs of a Final ply's units u that are no longer in
// use (runstore.BlobInUse): the outputs of merge attempts that lost, the
// expansion and combined runs, and the working blobs. Each bucket and
// task is one listing of the prefix its blobs share; a leaf that is the
// whole ply lists its folder once.
func (r *Run) sweep(ctx context.Context, p *runstore.Ply, u runstore.DispatchUnits) error {
	named, err := r.store.NamedIn(ctx, p, u.Buckets)
	if err != nil {
		return err
	}
	var prefixes []string
	if u.Whole {
		prefixes, u = []string{runstore.PlyFolder(p.Ply)}, runstore.DispatchUnits{}
	}
	for b := u.Buckets.Lo; b < u.Buckets.Hi; b++ {
		prefixes = append(prefixes, runstore.FinalRunBlobPrefix(p.Ply, b))
	}
	for i := u.Expansions.Lo; i < u.Expansions.Hi; i++ {
		prefixes = append(prefixes, runstore.ExpansionBlobPrefix(p.Ply, i))
	}
	for i := u.Combines.Lo; i < u.Combines.Hi; i++ {
		prefixes = append(prefixes, runstore.CombineBlobPrefix(p.Ply, i))
	}
	if u.Working {
		prefixes = append(prefixes, runstore.WorkingBlobPrefixes(p.Ply)...)
	}
	var names []string
	for _, prefix := range prefixes {
		list, err := r.blobs.List(ctx, prefix)
		if err != nil {
			return fmt.Errorf("listing blobs %s*: %w", prefix, err)
		}
		for _, b := range list {
			names = append(names, b.Name)
		}
	}
	for _, name := range names {
		if runstore.BlobInUse(p, name, named) {
			continue
		}
		if err := storage.DeleteBlob(ctx, r.blobs, name); err != nil {
			return fmt.Errorf("deleting %s: %w", name, err)
		}
	}
	return nil
}

// dispatched makes a Final ply whose leaves are all done Dispatched.
// Resolve tasks may have finished before, and then left its resolution
// to this check.
func (r *Run) dispatched(ctx context.Context, p *runstore.Ply, c runstore.Claim) error {
	if err := r.advance(ctx, p, runstore.NextEnqueued, r.store.MarkDispatched); err != nil {
		return err
	}
	return r.resolveIfDone(ctx, p, c)
}

// backLeaf enqueues the resolution of the previous ply's final blobs of
// leaf of a Resolved ply.
func (r *Run) backLeaf(ctx context.Context, p *runstore.Ply, leaf int) error {
	finals, err := r.store.FinalsIn(ctx, p.Ply-1, p.BackLeaf(leaf))
	if err != nil {
		return err
	}
	return r.enqueueResolves(ctx, p.Ply-1, finals)
}

// enqueueResolves enqueues the resolution of final blobs of ply, each R
// message naming its blob, so that the resolution need not read the
// blob's row (one table read a final blob); in a run whose workers may
// be of releases that refuse that form (runstore.MessagesUnnamed), by
// index alone.
func (r *Run) enqueueResolves(ctx context.Context, ply int, finals []runstore.FinalBlob) error {
	for _, f := range finals {
		m := message.Message{Kind: message.KindResolve, Ply: ply, Index: f.Index, Blob: f.Blob}
		if r.Config.Messages < runstore.MessagesNamed {
			m.Blob = ""
		}
		if err := r.shared.Enqueue(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// closed closes a Resolved ply whose leaves are all done.
func (r *Run) closed(ctx context.Context, p *runstore.Ply, _ runstore.Claim) error {
	return r.advance(ctx, p, runstore.PreviousEnqueued, r.store.Close)
}

// advance moves p on e by move, reading the record again when another
// writer changed it first (a takeover rewrites its owner) while it still
// awaits e. On success p is the record as moved or as found moved.
func (r *Run) advance(ctx context.Context, p *runstore.Ply, e runstore.Event, move func(context.Context, *runstore.Ply) error) error {
	for p.Awaits(e) {
		err := move(ctx, p)
		if !errors.Is(err, runstore.ErrConflict) {
			return err
		}
		now, err := r.store.Ply(ctx, p.Ply)
		if err != nil {
			return err
		}
		*p = *now
	}
	return nil
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// The flow between plies. A ply's lifecycle, which state follows which
// on what event, is runstore's (runstore/lifecycle.go); the flow is what
// the pipeline does at each transition. Handlers report an item done
// (task.Flow); once the item's stage is complete, the flow makes the
// transition that the ply awaits (runstore.Ply.Awaits), and the message
// that made it (its owner) does the follow-up of the state it led to,
// which a redelivery of that message finishes after a crash, and which
// anyone takes over once the owner's lease has run out (followUp):
//
//	state     the owner's follow-up
//	Merging   enqueue the first scan
//	Final     sweep the ply's spent blobs, enqueue the next work, then
//	          make the ply Dispatched (runstore.NextEnqueued): fanned
//	          out over D messages (dispatch.go)
//	Resolved  enqueue the previous ply's resolution, fanned out over B
//	          messages (at ply 0: mark the run complete), then close the
//	          ply (runstore.PreviousEnqueued)
//
// Before making a ply Final, its scan records the final blobs and the
// next ply's splitters; the next ply is added with the transition.
type flow struct{ r *Run }

var _ task.Flow = flow{}

// seedOwner owns ply 0's transitions: seeding again finishes them.
const seedOwner = "seed"

// seedLease is how long a seed holds ply 0's follow-ups before a worker
// may take them over: as long as a worker's default lease.
const seedLease = time.Minute

// seedClaim is a seed's claim on ply 0's transitions, from now.
func seedClaim() runstore.Claim {
	now := time.Now()
	return runstore.Claim{Owner: seedOwner, Now: now, Until: now.Add(seedLease)}
}

// Seed creates a run's resources and enqueues the start position. It is
// idempotent: seeding again with the same configuration changes nothing
// (or finishes what a crashed seed began), and a different configuration
// is refused.
func Seed(ctx context.Context, be storage.Backend, cfg RunConfig) (*Run, error) {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := newRun(be, cfg)
	if err != nil {
		return nil, err
	}
	creators := []interface{ Create(context.Context) error }{r.work, r.compensation, r.poison, r.blobs}
	for _, t := range r.store.Tables() {
		creators = append(creators, t)
	}
	for _, c := range creators {
		if err := c.Create(ctx); err != nil {
			return nil, fmt.Errorf("creating run resources: %w", err)
		}
	}
	have, err := runstore.AddConfig(ctx, be.Table(StateTable(cfg.Name)), cfg.Config, time.Now())
	if errors.Is(err, storage.ErrExists) {
		// How the run's stages count is the run's own, recorded by
		// the release that seeded it, not a setting to compare.
		cfg.Completion = have.Completion
		// So are how many queues hold its compensation messages, and
		// the forms of message its workers send.
		cfg.CompensationShards, cfg.Messages = have.CompensationShards, have.Messages
		if have != cfg.Config {
			return nil, fmt.Errorf("run %q already exists with %s; refusing %s", cfg.Name, settings(have), settings(cfg.Config))
		}
		if r, err = newRun(be, cfg); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := r.seedStart(ctx); err != nil {
		return nil, fmt.Errorf("seeding the start position: %w", err)
	}
	return r, nil
}

// settings describes a run's settings row in the words of the flags.
func settings(c runstore.Config) string {
	start := "the usual start"
	if b, err := board.New(c.Board); err != nil || c.Start != b.Start() {
		start = "start " + c.Start.Text()
	}
	solve := "no solving"
	if c.Solve {
		solve = fmt.Sprintf("solving in blobs of %d positions", c.SolvePositions)
	}
	accounts := fmt.Sprintf("%d storage accounts", c.Accounts)
	if c.StateAccounts != c.Accounts {
		accounts += fmt.Sprintf(" (state rows on %d)", c.StateAccounts)
	}
	grow := "fixed sizes"
	if c.GrowFrom > 0 {
		grow = fmt.Sprintf("sizes doubling from ply %d", c.GrowFrom)
	}
	fanIn := "no merge fan-in limit"
	if c.MergeFanIn > 0 {
		fanIn = fmt.Sprintf("merge fan-in %d", c.MergeFanIn)
	}
	return fmt.Sprintf("board %d, target ply %d, blob positions %d, bucket blobs %d, %s, %s, %s, %s, %d queue shards, %d partition shards, %s",
		c.Board, c.Target, c.BlobPositions, c.BucketBlobs, grow, fanIn, start, solve, c.QueueShards, c.PartitionShards, accounts)
}

// seedStart makes ply 0: one run holding the start position, merged at
// once into the ply's one final blob, then dispatched like any other ply.
//
// Crash points: the start blob is rewritten with the same bytes; its run
// is committed as the output of ply 0's one bucket under the seed's fixed
// attempt tag, so a second seed rewrites the same row and finds the
// marker; ply 0 then follows the common path from Merging, whose every
// step a second seed repeats or skips.
func (r *Run) seedStart(ctx context.Context) error {
	p, err := r.store.Ply(ctx, 0)
	if errors.Is(err, runstore.ErrNoPly) {
		if p, err = r.store.AddFirstPly(ctx, seedClaim()); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if p.Awaits(runstore.MergeComplete) {
		start := r.Board.Canonical(r.Config.Start)
		blob, err := packed.EncodeKeys([]board.Position{start})
		if err != nil {
			return err
		}
		// Named as the one output of bucket 0's merge: the sweep names
		// a ply's final blobs from its merge markers alone.
		name := runstore.FinalRunBlobName(0, 0, 0, seedOwner)
		if err := r.blobs.Put(ctx, name, blob); err != nil {
			return fmt.Errorf("writing the start position: %w", err)
		}
		merged := &runstore.MergedBlob{Blob: name, Count: 1, Min: start, Max: start, Samples: start.AppendKey(nil)}
		if r.Board.Terminal(start) {
			merged.Terminal = 1 // a -start position may be a finished game
		}
		bm := runstore.BucketMerge{Bucket: 0, Attempt: seedOwner, Outputs: 1, Merged: []*runstore.MergedBlob{merged}}
		mst := r.store.MergeStage(p)
		if _, err := mst.Commit(ctx, bm); err != nil {
			return err
		}
		if _, err := mst.AllDone(ctx, 0); err != nil { // the stage's root, and its tally
			return err
		}
		if err := r.finish(ctx, p, seedClaim()); err != nil && !errors.Is(err, runstore.ErrConflict) {
			return err
		}
		if p, err = r.store.Ply(ctx, 0); err != nil {
			return err
		}
	}
	// A seed that died after making ply 0 Final owes its follow-up.
	return r.followUp(ctx, p, seedClaim())
}

// Expanded starts a ply's merging once all its expansion tasks are done.
// Tasks that finish together may each see that; the transition lets one
// of them own the first scan (duplicate scans would be harmless, but
// slow: each enqueues a merge for every bucket).
//
// While the ply may be expanding, the stage's completion is counted
// from the record's fixed parts (runstore.Store.PlySince); the record
// is read only by the task that completes the stage, which makes the
// transition or, redelivered, owes the first scan. A task that does not
// complete it owes nothing: the first scan is the owner's, and any
// follow-up after it is a scan's to take over (stall.go).
func (f flow) Expanded(ctx context.Context, t *task.Task, ply, index int) error {
	store := f.r.store
	p, err := store.PlySince(ctx, ply, runstore.Expanding)
	if err != nil {
		return err
	}
	if p.State == runstore.Expanding {
		all, err := store.ExpansionStage(p).AllDone(ctx, index)
		if err != nil || !all {
			return err
		}
	}
	if p, err = store.Ply(ctx, ply); err != nil {
		return err
	}
	if p.Awaits(runstore.ExpansionComplete) {
		if err := store.StartMerging(ctx, p, t.Claim()); err != nil {
			return ignoreConflict(err) // another task started the merging
		}
	}
	// A redelivery may owe the first scan.
	return f.r.followUp(ctx, p, t.Claim())
}

// Merged finishes a ply whose merged blobs are all in and disjoint, then
// sweeps it and dispatches the next work; or, for a ply further on,
// finishes the follow-up when t owns it or may take it over.
func (f flow) Merged(ctx context.Context, t *task.Task, p *runstore.Ply) error {
	if p.Awaits(runstore.MergeComplete) {
		if err := f.r.finish(ctx, p, t.Claim()); err != nil {
			return ignoreConflict(err) // another scan finished the ply first
		}
	}
	return f.r.followUp(ctx, p, t.Claim())
}

// followUp does the follow-up that p's current state owes (the table at
// the top of this file) when c made the transition into it (the
// transition's own delivery, or a redelivery after a crash), or when c
// takes it over from an owner whose lease has run out: the owner's
// message may have been poisoned, and no redelivery would ever come.
func (r *Run) followUp(ctx context.Context, p *runstore.Ply, c runstore.Claim) error {
	if p.Owner != c.Owner {
		if !p.Owes() || c.Now.Before(p.Until) {
			return nil // the owner does it, or it is done
		}
		if err := r.store.TakeOver(ctx, p, c); err != nil {
			return ignoreConflict(err) // another claimant took it over first
		}
	}
	switch p.State {
	case runstore.Merging:
		return r.shared.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply})
	case runstore.Final:
		return r.afterFinal(ctx, p, c)
	case runstore.Resolved:
		return r.afterResolved(ctx, p, c)
	}
	return nil
}

// finish writes the next ply's splitters, then makes a Merging ply Final
// with its totals and adds the next ply, in one transaction. It reads
// the roots of the ply's stages (runstore.MergedTotals), whose tallies
// depend only on markers that no longer change, so concurrent scans
// write the same. The final blob rows are written by the dispatch
// leaves (dispatchLeaf), each its own.
func (r *Run) finish(ctx context.Context, p *runstore.Ply, owner runstore.Claim) error {
	t, keys, err := r.store.MergedTotals(ctx, p)
	if err != nil {
		return err
	}
	samples := make([]board.Position, 0, len(keys)/board.KeyLen)
	for k := 0; k+board.KeyLen <= len(keys); k += board.KeyLen {
		if s, err := r.Board.DecodeKey(keys[k : k+board.KeyLen]); err == nil {
			samples = append(samples, s)
		}
	}
	var next *runstore.Ply
	if p.Ply < r.Config.Target && t.Positions > 0 {
		sizes := r.Config.Sizes
		splitters := dedup.ChooseSplitters(r.Board, samples, t.Positions, r.shared.FinalPositions(p.Ply+1),
			sizes.BucketBlobsAt(p.Ply+1), sizes.MostBuckets(t.Finals))
		if err := r.blobs.Put(ctx, runstore.SplittersBlobName(p.Ply+1), dedup.EncodeSplitters(splitters)); err != nil {
			return fmt.Errorf("writing the splitters of ply %d: %w", p.Ply+1, err)
		}
		next = &runstore.Ply{Ply: p.Ply + 1, Tasks: t.Finals, Buckets: len(splitters) + 1,
			TerminalSources: r.shared.TerminalSourcesOnly(p.Ply + 1), RefsMarkTerminal: true}
		next.Levels = sizes.Levels(next.Tasks, next.Buckets)
	}
	err = r.store.Finish(ctx, p, owner, t, next)
	if errors.Is(err, runstore.ErrConflict) && next != nil {
		// Another scan finished the ply first, and wrote the same
		// splitters, which the next ply's sweep may have deleted before
		// our write.
		if _, derr := r.shared.DropIfSwept(ctx, next.Ply, runstore.SplittersBlobName(next.Ply)); derr != nil {
			return derr
		}
	}
	return err
}

// afterFinal sweeps a Final ply's spent blobs and enqueues the work that
// follows, then marks it Dispatched: leaf by leaf, fanned out
// (dispatch.go).
func (r *Run) afterFinal(ctx context.Context, p *runstore.Ply, c runstore.Claim) error {
	return dispatch().all(ctx, r, p, c)
}

// Resolved resolves a ply once every final blob of it is resolved, and
// lets the task that did it start the previous ply's resolution.
func (f flow) Resolved(ctx context.Context, t *task.Task, ply, index int) error {
	store := f.r.store
	p, err := store.PlySince(ctx, ply, runstore.Final)
	if err != nil {
		return err
	}
	// Every resolution counts its group, whatever the ply's state:
	// resolveIfDone reads only the completion markers (the tree's root,
	// or a flat run's group markers). The count needs the record's fixed
	// parts alone; the task that completes the stage then reads it to
	// move the ply, or, redelivered, for the follow-up it owes.
	if all, err := store.ResolutionStage(p).AllDone(ctx, index); err != nil || !all {
		return err
	}
	if p, err = store.Ply(ctx, ply); err != nil {
		return err
	}
	if p.Awaits(runstore.ResolutionComplete) {
		return f.r.resolve(ctx, p, t.Claim())
	}
	return f.r.followUp(ctx, p, t.Claim())
}

// resolveIfDone resolves a Dispatched ply once every final blob of it is
// resolved (a ply without positions at once).
func (r *Run) resolveIfDone(ctx context.Context, p *runstore.Ply, owner runstore.Claim) error {
	if all, err := r.store.ResolutionStage(p).Complete(ctx); err != nil || !all {
		return err
	}
	return r.resolve(ctx, p, owner)
}

// resolve makes a Dispatched ply whose final blobs are all resolved
// Resolved, owned by owner, with their summed counts, and does the
// follow-up.
func (r *Run) resolve(ctx context.Context, p *runstore.Ply, owner runstore.Claim) error {
	c, err := r.store.ResolvedCounts(ctx, p)
	if err != nil {
		return err
	}
	if err := r.store.Resolve(ctx, p, owner, c); err != nil {
		return ignoreConflict(err)
	}
	return r.afterResolved(ctx, p, owner)
}

// afterResolved enqueues the previous ply's resolution (leaf by leaf,
// fanned out: dispatch.go) and then closes the ply or, at ply 0, marks
// the run complete and closes the ply.
func (r *Run) afterResolved(ctx context.Context, p *runstore.Ply, c runstore.Claim) error {
	if p.Ply > 0 {
		return back().all(ctx, r, p, c)
	}
	root := board.Unknown
	switch {
	case p.Black > 0:
		root = board.BlackWins
	case p.White > 0:
		root = board.WhiteWins
	case p.Draws > 0:
		root = board.Draw
	}
	done := runstore.Done{Root: root.String(), Completed: time.Now().UnixNano()}
	if p.Positions > 0 {
		rs, err := r.store.ResolutionStage(p).Markers(ctx)
		if err != nil {
			return err
		}
		if len(rs) > 0 {
			done.Scored, done.Score = rs[0].Scored, rs[0].Score
			done.ScoreBlack, done.ScoreWhite = rs[0].ScoreBlack, rs[0].ScoreWhite
		}
	}
	if err := r.store.MarkDone(ctx, done); err != nil {
		return err
	}
	return ignoreConflict(r.store.Close(ctx, p))
}

// ignoreConflict treats a transition (or a takeover) that another writer
// made first as done: its owner does the follow-up.
func ignoreConflict(err error) error {
	if errors.Is(err, runstore.ErrConflict) {
		return nil
	}
	return err
}

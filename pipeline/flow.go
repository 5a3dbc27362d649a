package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Seed creates a run's resources and enqueues the start position. It is
// idempotent: seeding again with the same configuration changes nothing,
// and a different configuration is refused.
//
// Crash points: the resources and the config row are created idempotently;
// ply 0 and ply 1 records are added in one transaction; the A message is
// enqueued only while ply 0 is not marked dispatched, so a crash before
// the mark re-enqueues on the next seed (a duplicate A message is
// harmless: every handler is idempotent).
func Seed(ctx context.Context, be storage.Backend, cfg RunConfig) (*Run, error) {
	ctx = withCategory(ctx, CategoryControl)
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := newRun(be, cfg)
	if err != nil {
		return nil, err
	}
	for _, c := range []interface{ Create(context.Context) error }{r.work, r.poison, r.blobs, r.state, r.back} {
		if err := c.Create(ctx); err != nil {
			return nil, fmt.Errorf("creating run resources: %w", err)
		}
	}
	conf := storage.Entity{PartitionKey: pkRun, RowKey: rkConfig, Props: map[string]any{
		"Board": int64(cfg.Board), "Target": int64(cfg.Target),
		"BlobPositions": int64(cfg.BlobPositions), "FanIn": int64(cfg.FanIn),
		"Created": time.Now().UnixNano(),
	}}
	if _, err := r.state.Add(ctx, conf); errors.Is(err, storage.ErrExists) {
		have, err := OpenRun(ctx, be, cfg.Name)
		if err != nil {
			return nil, err
		}
		if have.Config != cfg {
			h := have.Config
			return nil, fmt.Errorf("run %q already exists with board %d, target ply %d, blob positions %d, fan-in %d; refusing board %d, target ply %d, blob positions %d, fan-in %d",
				cfg.Name, h.Board, h.Target, h.BlobPositions, h.FanIn, cfg.Board, cfg.Target, cfg.BlobPositions, cfg.FanIn)
		}
	} else if err != nil {
		return nil, fmt.Errorf("recording run configuration: %w", err)
	}

	p0, err := r.getPly(ctx, 0)
	if errors.Is(err, storage.ErrNotFound) {
		start := r.Board.Canonical(r.Board.Start())
		blob := blobFor(0, "a-0")
		if err := r.blobs.Put(ctx, blob, start.AppendKey(nil)); err != nil {
			return nil, fmt.Errorf("writing the start position: %w", err)
		}
		final := &rangeRecord{Blob: blob, Count: 1, Min: start, Max: start, Samples: start.AppendKey(nil)}
		if err := r.completePly(ctx, &plyRecord{Ply: 0, State: plyOpen}, []*rangeRecord{final}, "seed", true); err != nil {
			return nil, err
		}
		p0, err = r.getPly(ctx, 0)
	}
	if err != nil {
		return nil, err
	}
	if !p0.Dispatched {
		if err := r.dispatch(ctx, p0); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// completePly records a ply's final blobs and opens the next ply, in one
// transaction guarded by the ply record's ETag (or by insertion when the
// record is new), so it happens exactly once. owner is the claim that did
// it: only that claim's message dispatches the next work, and a redelivery
// of that message finishes a dispatch that a crash interrupted.
func (r *Run) completePly(ctx context.Context, p *plyRecord, finals []*rangeRecord, owner string, insert bool) error {
	slices.SortFunc(finals, func(a, b *rangeRecord) int { return board.Compare(a.Min, b.Min) })
	done := *p
	done.State, done.Owner, done.Dispatched = plyComplete, owner, false
	done.Blobs, done.Counts = nil, nil
	done.Positions, done.Terminal = 0, 0
	for _, f := range finals {
		done.Blobs = append(done.Blobs, f.Blob)
		done.Counts = append(done.Counts, f.Count)
		done.Positions += f.Count
		done.Terminal += f.Terminal
	}
	ops := []storage.Op{{Kind: storage.OpUpdate, Entity: done.entity(), ETag: p.ETag}}
	if insert {
		ops[0] = storage.Op{Kind: storage.OpAdd, Entity: done.entity()}
	}
	if p.Ply < r.Config.Target && done.Positions > 0 {
		next := &plyRecord{Ply: p.Ply + 1, State: plyOpen, Tasks: len(finals)}
		next.Splitters = r.splitters(finals, done.Positions)
		ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: next.entity()})
	}
	if _, err := r.state.Transact(ctx, pkPlies, ops); err != nil {
		return fmt.Errorf("completing ply %d: %w", p.Ply, err)
	}
	return nil
}

// splitters picks bucket bounds for the next ply from the sample positions
// kept in the final records: it expands the samples and takes quantiles of
// their children, aiming at buckets of about 3/4 of a blob, so every
// expansion task cuts its sorted output at the same keys and runs from
// different buckets never overlap.
func (r *Run) splitters(finals []*rangeRecord, positions int64) []board.Position {
	var kids []board.Position
	var parents, distinct int
	buf := make([]board.Position, 0, 32)
	for _, f := range finals {
		for i := 0; i+board.KeyLen <= len(f.Samples); i += board.KeyLen {
			p, err := r.Board.DecodeKey(f.Samples[i : i+board.KeyLen])
			if err != nil {
				continue
			}
			parents++
			buf, _ = r.Board.Children(p, buf[:0])
			distinct += len(buf)
			kids = append(kids, buf...)
		}
	}
	if parents == 0 || len(kids) == 0 {
		return nil
	}
	estimate := float64(positions) * float64(distinct) / float64(parents)
	buckets := int(math.Ceil(estimate / (0.75 * float64(r.Config.BlobPositions))))
	slices.SortFunc(kids, board.Compare)
	kids = slices.Compact(kids)
	buckets = min(buckets, len(kids), 3000)
	if buckets <= 1 {
		return nil
	}
	out := make([]board.Position, 0, buckets-1)
	for k := 1; k < buckets; k++ {
		s := kids[k*len(kids)/buckets]
		if len(out) == 0 || board.Compare(out[len(out)-1], s) < 0 {
			out = append(out, s)
		}
	}
	return out
}

// dispatch enqueues the work that follows a complete ply, then marks the
// ply dispatched. A crash in between re-enqueues on redelivery of the
// owner's message; duplicates are harmless.
func (r *Run) dispatch(ctx context.Context, p *plyRecord) error {
	switch {
	case p.Positions == 0:
		// Every position of the previous ply was terminal: there is
		// nothing to expand, so results start flowing back from here.
		return r.finishResolve(ctx, p, "empty", 0, 0, 0, 0)
	case p.Ply >= r.Config.Target:
		for j := range p.Blobs {
			if err := r.enqueue(ctx, Message{Kind: KindResolve, Ply: p.Ply, Index: j}); err != nil {
				return err
			}
		}
	case len(p.Blobs) == 1 && p.Counts[0] <= InlineLimit:
		keys, err := r.readKeys(ctx, p.Blobs[0])
		if err != nil {
			return err
		}
		if err := r.enqueue(ctx, Message{Kind: KindInline, Ply: p.Ply, Positions: keys}); err != nil {
			return err
		}
	default:
		for j, b := range p.Blobs {
			if err := r.enqueue(ctx, Message{Kind: KindChunk, Ply: p.Ply, Index: j, Blob: b}); err != nil {
				return err
			}
		}
	}
	p.Dispatched = true
	if err := r.updatePly(ctx, p); err != nil && !errors.Is(err, storage.ErrPreconditionFailed) {
		return err
	}
	return nil
}

func (r *Run) enqueue(ctx context.Context, m Message) error {
	return r.enqueueText(ctx, m.Format(), 0)
}

func (r *Run) enqueueText(ctx context.Context, text string, delay time.Duration) error {
	if _, err := r.work.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1}); err != nil {
		return fmt.Errorf("enqueuing %s: %w", clip(text), err)
	}
	return nil
}

// readKeys reads a final blob of positions.
func (r *Run) readKeys(ctx context.Context, blob string) ([]board.Position, error) {
	data, err := r.blobs.Get(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", blob, err)
	}
	keys, err := r.decodeKeys(data)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", blob, err)
	}
	return keys, nil
}

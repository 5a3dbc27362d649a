package runstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestPlySince: a store serves a ply record's fixed parts from memory
// once it has read or written the record at the state asked for, with
// no read of the plies partition; it never serves a part that may still
// change (the totals before Final, the counts before Resolved), nor an
// ETag, owner or lease, so that nothing moves a ply from such a record;
// and a read that finds a cached ply gone or changed under it (its run
// dropped and seeded again) forgets what it kept.
func TestPlySince(t *testing.T) {
	ctx := context.Background()
	var reads, writes atomic.Int64 // calls on the plies partition
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		switch {
		case c.Partition != pkPlies:
		case c.Op == storage.TableGet || c.Op == storage.TableQuery:
			reads.Add(1)
		default:
			writes.Add(1)
		}
		return next()
	})
	state, back := be.Table("runstate"), be.Table("runback")
	for _, tb := range []storage.Table{state, back} {
		if err := tb.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *Store {
		return New(board.MustNew(4), []storage.Table{state}, []storage.Table{back}, 1, TreeCompletion)
	}
	// a caches; b, another process, moves the plies, unseen by a.
	a, b := open(), open()
	claim := Claim{Owner: "o", Now: time.Unix(100, 0), Until: time.Unix(160, 0)}

	// since asks a for ply's record at since or later, and checks how
	// many reads that took and the parts it got.
	since := func(step string, ply int, st State, wantReads int64, want Ply) *Ply {
		t.Helper()
		before := reads.Load()
		p, err := a.PlySince(ctx, ply, st)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := reads.Load() - before; got != wantReads {
			t.Errorf("%s: %d reads of the plies partition, want %d", step, got, wantReads)
		}
		if p.Ply != want.Ply || p.State != want.State || p.Tasks != want.Tasks || p.Buckets != want.Buckets ||
			p.Totals != want.Totals || p.Counts != want.Counts || p.ETag != "" || p.Owner != "" || !p.Until.IsZero() {
			t.Errorf("%s: got %+v, want %+v without ETag, owner or lease", step, *p, want)
		}
		return p
	}
	if _, err := a.AddFirstPly(ctx, claim); err != nil {
		t.Fatal(err)
	}
	merging := Ply{Ply: 0, State: Merging, Tasks: 1, Buckets: 1}
	since("as written", 0, Expanding, 0, merging)
	since("merging, as written", 0, Merging, 0, merging)

	p, err := b.Ply(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := &Ply{Ply: 1, Tasks: 1, Buckets: 3, Levels: []CombineLevel{{2, 2}}}
	totals := Totals{Finals: 1, Positions: 1, Merges: 1}
	if err := b.Finish(ctx, p, claim, totals, next); err != nil {
		t.Fatal(err)
	}
	// a has not seen ply 0 Final: its record says Merging, a lower
	// bound, without the totals that came with Final.
	since("merging, after another made it final", 0, Merging, 0, merging)
	final := Ply{Ply: 0, State: Final, Tasks: 1, Buckets: 1, Totals: totals}
	since("final", 0, Final, 1, final)
	since("final again", 0, Final, 0, final)
	since("merging, once seen final", 0, Merging, 0, final)
	if err := b.MarkDispatched(ctx, p); err != nil {
		t.Fatal(err)
	}
	counts := Counts{Unknown: 1}
	if err := b.Resolve(ctx, p, claim, counts); err != nil {
		t.Fatal(err)
	}
	since("final, after another resolved it", 0, Final, 0, final)
	since("resolved", 0, Resolved, 1, Ply{Ply: 0, State: Resolved, Tasks: 1, Buckets: 1, Totals: totals, Counts: counts})

	// Nothing moves a ply from a record of its fixed parts alone: it is
	// refused before any write, and the refusal is no lost race
	// (ErrConflict) that a caller would take for another writer's move.
	fixed := since("next ply", 1, Expanding, 1, Ply{Ply: 1, State: Expanding, Tasks: 1, Buckets: 3})
	resolved, err := a.PlySince(ctx, 0, Resolved)
	if err != nil {
		t.Fatal(err)
	}
	for name, move := range map[string]func() error{
		"start merging": func() error { return a.StartMerging(ctx, fixed, claim) },
		"take over":     func() error { return a.TakeOver(ctx, resolved, claim) },
	} {
		before := writes.Load()
		if err := move(); err == nil || errors.Is(err, ErrConflict) || writes.Load() != before {
			t.Errorf("%s from a record of fixed parts: %v after %d writes, want a refusal before any", name, err, writes.Load()-before)
		}
	}
	if got, err := b.Ply(ctx, 1); err != nil || got.State != Expanding {
		t.Errorf("ply 1 after the refused moves: %+v, %v; want it still expanding", got, err)
	}
	if got := fixed.Levels; len(got) != 1 || got[0] != (CombineLevel{2, 2}) {
		t.Errorf("ply 1's levels from memory: %v, want [{2 2}]", got)
	}
	fixed.Levels[0].Groups = 9 // a reader's copy is its own
	since("next ply, after a reader changed its copy", 1, Expanding, 0, Ply{Ply: 1, State: Expanding, Tasks: 1, Buckets: 3})
	if got, _ := a.PlySince(ctx, 1, Expanding); got.Levels[0] != (CombineLevel{2, 2}) {
		t.Errorf("ply 1's levels from memory after a reader changed its copy: %v", got.Levels)
	}

	// The run dropped and seeded again under its name: a read that finds
	// ply 1 gone forgets every ply; one that finds ply 0 with other fixed
	// parts forgets them too.
	if err := state.Delete(ctx, pkPlies, rkPly(1), storage.AnyETag); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Ply(ctx, 1); !errors.Is(err, ErrNoPly) {
		t.Fatalf("reading a deleted ply: %v, want ErrNoPly", err)
	}
	since("resolved, after the cache was emptied", 0, Resolved, 1, Ply{Ply: 0, State: Resolved, Tasks: 1, Buckets: 1, Totals: totals, Counts: counts})
	two := Ply{Ply: 2, State: Expanding, Tasks: 4, Buckets: 5}
	for _, p := range []*Ply{&two, {Ply: 0, State: Closed, Tasks: 1, Buckets: 2}} {
		if _, err := state.Upsert(ctx, p.entity()); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Ply(ctx, p.Ply); err != nil {
			t.Fatal(err)
		}
	}
	since("closed, read with other buckets", 0, Expanding, 0, Ply{Ply: 0, State: Closed, Tasks: 1, Buckets: 2})
	since("ply 2, read before ply 0 changed", 2, Expanding, 1, two)
}

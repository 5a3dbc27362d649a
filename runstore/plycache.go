package runstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The plies partition is one partition that every handling reads, most
// of them for the parts of a ply's record that never change: in a sim
// rehearsal of a fleet (issue 38) it was the busiest partition of the
// run, at 2.1 record reads a handling. Most handlers need the record's
// fixed parts and a state that their message already guarantees (an
// expansion's ply is Final, its next ply exists), so a store keeps the
// records it reads and serves those parts from memory (PlySince).
//
// What of a record is fixed, and from when (every transition and
// takeover rewrites the whole record, copying what it does not change;
// ply.go, lifecycle.go):
//
//	Ply, Tasks, Buckets, Levels, TerminalSources,
//	RefsMarkTerminal                               with the record (Finish, AddFirstPly)
//	Totals                                         once Final (Finish sets them with it)
//	Counts                                         once Resolved (Resolve sets them with it)
//	State                                          never: it only moves on (lifecycle)
//	ETag, Owner, Until                             never: each transition or takeover changes them
//
// So a record read at state s tells, for as long as the run lives, the
// parts fixed by s, and that the ply is at s or later.

// plyCache holds, per ply, the most advanced record of it that the store
// has read or written. It belongs to one Store, the handle of one run
// (pipeline.Run), and lives as long as it: a handle held across a drop
// and a new seed of a run under the same name is stale anyway (its
// settings are the old run's); a fresh read that finds a cached ply
// gone, or its fixed parts changed, empties the cache all the same.
type plyCache struct {
	mu    sync.Mutex
	plies map[int]Ply
}

// see records p, just read or written.
func (c *plyCache) see(p *Ply) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.plies[p.Ply]; ok {
		if !sameFixed(&have, p) {
			clear(c.plies) // another run's record: see plyCache
		} else if have.State >= p.State {
			// A read that started before another finished: the
			// ply did not move back.
			return
		}
	}
	if c.plies == nil {
		c.plies = map[int]Ply{}
	}
	n := *p
	n.Levels = slices.Clone(p.Levels)
	c.plies[p.Ply] = n
}

// gone notes that ply has no record: if one was cached, its run was
// dropped (records are never deleted while a run lives).
func (c *plyCache) gone(ply int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.plies[ply]; ok {
		clear(c.plies)
	}
}

// get is the fixed parts of ply's record once it was seen at since or
// later.
func (c *plyCache) get(ply int, since State) (*Ply, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.plies[ply]
	if !ok || p.State < since {
		return nil, false
	}
	return p.fixedParts(), true
}

// sameFixed reports whether a and b, two records of one ply, agree on
// the parts fixed at the earlier of their states.
func sameFixed(a, b *Ply) bool {
	at := min(a.State, b.State)
	return a.Tasks == b.Tasks && a.Buckets == b.Buckets && a.TerminalSources == b.TerminalSources &&
		a.RefsMarkTerminal == b.RefsMarkTerminal &&
		slices.Equal(a.Levels, b.Levels) &&
		(at < Final || a.Totals == b.Totals) && (at < Resolved || a.Counts == b.Counts)
}

// fixedParts is a copy of p without what changes at every transition:
// no ETag, so that no transition or takeover is made from it (rewrite
// refuses it), and no Owner or Until.
func (p *Ply) fixedParts() *Ply {
	n := *p
	n.ETag, n.Owner, n.Until = "", "", time.Time{}
	n.Levels = slices.Clone(p.Levels)
	return &n
}

// PlySince is ply's record for a reader that needs only its fixed parts
// (plyCache) and whether the ply has reached state since: served from
// the store's memory once a record at since or later was read or
// written (the ply is there still, or further on), else read, so that a
// ply not at since is only ever found so by a read. Its State is where
// the ply stood when the record was read, a lower bound on where it
// stands now: Stage.Check may then find an item in its stage when the
// ply has moved past it, and the item's marker says it is done. It has
// no ETag, Owner or Until: a reader that moves the ply, takes its
// follow-up over or asks whether it owes one reads the record with Ply.
func (s *Store) PlySince(ctx context.Context, ply int, since State) (*Ply, error) {
	if p, ok := s.fixed.get(ply, since); ok {
		return p, nil
	}
	p, err := s.Ply(ctx, ply)
	if err != nil {
		return nil, err
	}
	return p.fixedParts(), nil
}

// errFixedParts: a transition from a record that PlySince gave.
func errFixedParts(p *Ply) error {
	return fmt.Errorf("ply %d: a record of its fixed parts alone (PlySince) moves nothing: read it with Ply", p.Ply)
}

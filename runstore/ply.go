package runstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/reversi-cloud/reversi/storage"
)

// State is where a ply stands. States only move forward, one step at a
// time, each step by one ETag-guarded write, so each happens exactly once.
//
//	Expanding  runs arrive from the previous ply's expansion tasks
//	Merging    every expansion task is done; combines (if the ply has
//	           a combine level), then merges, remove duplicates
//	Final      the final blobs are fixed; the next work is being enqueued
//	Dispatched the next ply's expansion (or, at the target, this ply's
//	           resolution) is enqueued; results are awaited
//	Resolved   every final blob's results are known; the previous ply's
//	           resolution is being enqueued
//	Closed     the previous ply's resolution is enqueued (at ply 0: the
//	           run is marked complete)
//
// The transitions that have an owner (into Merging, Final and Resolved)
// record it: the message whose handler made the transition. Its follow-up
// (enqueuing the next work) is that owner's job, so a redelivery of the
// owner's message finishes a follow-up that a crash interrupted, and
// nobody else repeats it.
type State int

// The ply states, in order.
const (
	Expanding State = iota + 1
	Merging
	Final
	Dispatched
	Resolved
	Closed
)

var stateNames = [...]string{Expanding: "expanding", Merging: "merging", Final: "final", Dispatched: "dispatched", Resolved: "resolved", Closed: "closed"}

func (s State) String() string {
	if s < Expanding || s > Closed {
		return "state(" + strconv.Itoa(int(s)) + ")"
	}
	return stateNames[s]
}

// AtLeast reports whether s is t or later.
func (s State) AtLeast(t State) bool { return s >= t }

func parseState(name string) (State, bool) {
	for s := Expanding; s <= Closed; s++ {
		if stateNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// Totals are a ply's figures, fixed when it becomes Final.
type Totals struct {
	Finals    int   // final blobs
	Positions int64 // distinct positions
	Terminal  int64 // positions where the game is over
	Edges     int64 // moves from the previous ply into this one
	Merges    int64 // merges that committed: one per bucket
	BlobReads int64 // segments read by combines and bucket merges
	Merged    int64 // entries read by merges
	Combines  int64 // combine tasks that committed
}

// Counts are a ply's results, fixed when it becomes Resolved.
type Counts struct{ Black, White, Draws, Unknown int64 }

// Ply is a ply's record: its state and figures.
type Ply struct {
	Ply   int
	ETag  string
	State State
	Owner string // who made the last owned transition (see State)
	Tasks int    // expansion tasks that feed this ply
	// Buckets is how many buckets the ply's splitters cut it into; each
	// is merged by one task. Fixed with the record.
	Buckets int
	// Groups and Ranges are the ply's combine level (Sizes.Levels), 0
	// when its buckets merge the expansion runs directly: the tasks form
	// Groups groups and the buckets Ranges ranges, and combine task
	// g*Ranges+r merges group g's segments of range r. Fixed with the
	// record.
	Groups, Ranges int
	Totals
	Counts
}

// plySchema is the ply record's version and its migrations (schema).
// Version 1 is the first that records its version.
var plySchema = schema{
	0: plyFromUnversioned,
}

// plyFromUnversioned brings a ply record of version 0 to version 1.
// Records written before combine levels existed lack Groups, Ranges and
// Combines: such a ply merged its buckets in one level, with no combine
// tasks.
func plyFromUnversioned(props map[string]any) error {
	if _, ok := props["Groups"]; !ok {
		props["Groups"], props["Ranges"] = int64(0), int64(0)
	}
	if _, ok := props["Combines"]; !ok {
		props["Combines"] = int64(0)
	}
	return nil
}

func (p *Ply) entity() storage.Entity {
	return storage.Entity{PartitionKey: pkPlies, RowKey: rkPly(p.Ply), Props: plySchema.stamp(map[string]any{
		"State": p.State.String(), "Owner": p.Owner, "Tasks": int64(p.Tasks), "Buckets": int64(p.Buckets),
		"Groups": int64(p.Groups), "Ranges": int64(p.Ranges),
		"Finals": int64(p.Finals), "Positions": p.Positions, "Terminal": p.Terminal, "Edges": p.Edges,
		"Merges": p.Merges, "BlobReads": p.BlobReads, "Merged": p.Merged, "Combines": p.Combines,
		"Black": p.Black, "White": p.White, "Draws": p.Draws, "Unknown": p.Unknown,
	})}
}

// decodePly reads a ply record of any version that plySchema knows.
func decodePly(e storage.Entity) (*Ply, error) {
	n, err := strconv.Atoi(e.RowKey)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w: ply record with row key %q", ErrMalformed, e.RowKey)
	}
	what := fmt.Sprintf("ply %d record", n)
	if e, err = plySchema.upgrade(e, what); err != nil {
		return nil, err
	}
	d := decode(e, nil)
	p := &Ply{Ply: n, ETag: e.ETag, Owner: d.str("Owner"), Tasks: d.count("Tasks"), Buckets: d.count("Buckets"),
		Groups: d.count("Groups"), Ranges: d.count("Ranges")}
	name := d.str("State")
	var ok bool
	if p.State, ok = parseState(name); !ok && d.err == nil {
		d.fail(fmt.Errorf("ply %d has the unknown state %q", n, name))
	}
	p.Totals = Totals{Finals: d.count("Finals"), Positions: d.int("Positions"), Terminal: d.int("Terminal"),
		Edges: d.int("Edges"), Merges: d.int("Merges"), BlobReads: d.int("BlobReads"), Merged: d.int("Merged"),
		Combines: d.int("Combines")}
	p.Counts = Counts{Black: d.int("Black"), White: d.int("White"), Draws: d.int("Draws"), Unknown: d.int("Unknown")}
	return p, d.done(what)
}

// ErrNoPly: the ply has no record (yet, or ever: past the target).
var ErrNoPly = errors.New("runstore: no such ply")

// Ply reads a ply's record.
func (s *Store) Ply(ctx context.Context, ply int) (*Ply, error) {
	e, err := s.state(pkPlies).Get(ctx, pkPlies, rkPly(ply))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("ply %d has no record in this run: %w", ply, ErrNoPly)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ply %d record: %w", ply, err)
	}
	return decodePly(e)
}

// Plies reads every ply record, in ply order.
func (s *Store) Plies(ctx context.Context) ([]*Ply, error) {
	es, err := queryAll(ctx, s.state, pkPlies, "", "")
	if err != nil {
		return nil, err
	}
	out := make([]*Ply, 0, len(es))
	for _, e := range es {
		p, err := decodePly(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// AddFirstPly records ply 0 when the run is seeded, already Merging: its
// one bucket, the start position, needs no expansion. owner finishes it.
func (s *Store) AddFirstPly(ctx context.Context, owner string) (*Ply, error) {
	p := &Ply{Ply: 0, State: Merging, Owner: owner, Tasks: 1, Buckets: 1}
	etag, err := s.state(pkPlies).Add(ctx, p.entity())
	if errors.Is(err, storage.ErrExists) {
		return s.Ply(ctx, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("recording ply 0: %w", err)
	}
	p.ETag = etag
	return p, nil
}

// transition moves p one state forward, guarded by its ETag, after
// change has set the new figures on a copy. On success p is the new
// record; on any failure p is unchanged.
func (s *Store) transition(ctx context.Context, p *Ply, to State, change func(*Ply), extra ...storage.Op) error {
	if p.State+1 != to {
		return fmt.Errorf("%w: ply %d cannot go from %s to %s", ErrIllegalTransition, p.Ply, p.State, to)
	}
	next := *p
	next.State = to
	if change != nil {
		change(&next)
	}
	ops := append([]storage.Op{{Kind: storage.OpUpdate, Entity: next.entity(), ETag: p.ETag}}, extra...)
	etags, err := s.state(pkPlies).Transact(ctx, pkPlies, ops)
	if err != nil {
		return fmt.Errorf("moving ply %d from %s to %s: %w", p.Ply, p.State, to, conflict(err))
	}
	next.ETag = etags[0]
	*p = next
	return nil
}

// StartMerging: Expanding to Merging, once every expansion task is done.
// owner then enqueues the first scan.
func (s *Store) StartMerging(ctx context.Context, p *Ply, owner string) error {
	return s.transition(ctx, p, Merging, func(n *Ply) { n.Owner = owner })
}

// Finish: Merging to Final, with the ply's totals; when next is not nil,
// the next ply's record is added in the same transaction (Expanding).
// owner then sweeps the ply's spent blobs and enqueues the next work.
func (s *Store) Finish(ctx context.Context, p *Ply, owner string, t Totals, next *Ply) error {
	var extra []storage.Op
	if next != nil {
		next.State, next.Owner = Expanding, ""
		extra = append(extra, storage.Op{Kind: storage.OpAdd, Entity: next.entity()})
	}
	return s.transition(ctx, p, Final, func(n *Ply) { n.Owner, n.Totals = owner, t }, extra...)
}

// MarkDispatched: Final to Dispatched, once the next work is enqueued.
func (s *Store) MarkDispatched(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, Dispatched, nil)
}

// Resolve: Dispatched to Resolved, with the ply's result counts. owner
// then enqueues the previous ply's resolution.
func (s *Store) Resolve(ctx context.Context, p *Ply, owner string, c Counts) error {
	return s.transition(ctx, p, Resolved, func(n *Ply) { n.Owner, n.Counts = owner, c })
}

// Close: Resolved to Closed, once the previous ply's resolution is
// enqueued (or, at ply 0, the run is marked complete).
func (s *Store) Close(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, Closed, nil)
}

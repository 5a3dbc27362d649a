package runstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/reversi-cloud/reversi/storage"
)

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

// Ply is a ply's record: its state and figures. Its state moves only by
// the transitions of its lifecycle (lifecycle.go), each of which rewrites
// the whole record at plySchema's version.
type Ply struct {
	Ply   int
	ETag  string
	State State
	Owner string // who made the last owned transition (lifecycle.go)
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
	// TerminalSources says the ply's backtracking rows name the parents
	// of its terminal positions only, in order, and nothing for the
	// others: at the target ply of a run that does not solve, no other
	// position has a result to send back, and their rows would be most of
	// the run's disk. Fixed with the record.
	TerminalSources bool
	Totals
	Counts
}

// KeepsSources reports whether a position of the ply, terminal or not,
// has backtracking rows: every position does, unless TerminalSources
// keeps the terminal ones only. The merges that write the rows and the
// readers that count through them both go by it.
func (p *Ply) KeepsSources(terminal bool) bool { return terminal || !p.TerminalSources }

// plySchema is the ply record's version and its migrations (schema).
// Version 1 is the first that records its version.
var plySchema = schema{
	0: plyFromUnversioned,
	1: plyWithAllSources,
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

// plyWithAllSources brings a ply record of version 1 to version 2: it
// kept backtracking rows for every position (TerminalSources false).
func plyWithAllSources(props map[string]any) error {
	props["TerminalSources"] = false
	return nil
}

func (p *Ply) entity() storage.Entity {
	return storage.Entity{PartitionKey: pkPlies, RowKey: rkPly(p.Ply), Props: plySchema.stamp(map[string]any{
		"State": p.State.String(), "Owner": p.Owner, "Tasks": int64(p.Tasks), "Buckets": int64(p.Buckets),
		"Groups": int64(p.Groups), "Ranges": int64(p.Ranges), "TerminalSources": p.TerminalSources,
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
		Groups: d.count("Groups"), Ranges: d.count("Ranges"), TerminalSources: d.bool("TerminalSources")}
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

// AddFirstPly records ply 0 when the run is seeded, already Merging, as
// if its expansion were complete: its one bucket, the start position,
// needs no expansion. owner owns that transition: it merges the bucket
// and finishes the ply.
func (s *Store) AddFirstPly(ctx context.Context, owner string) (*Ply, error) {
	p := &Ply{Ply: 0, State: stepOn(ExpansionComplete).to, Owner: owner, Tasks: 1, Buckets: 1}
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

// transition moves p on e (lifecycle.go), guarded by its ETag, after
// change has set the new figures on a copy; owner is recorded when the
// transition is owned. On success p is the new record; on any failure p
// is unchanged.
func (s *Store) transition(ctx context.Context, p *Ply, e Event, owner string, change func(*Ply), extra ...storage.Op) error {
	st, err := stepFrom(p.State, e)
	if err != nil {
		return fmt.Errorf("moving ply %d: %w", p.Ply, err)
	}
	n := *p
	n.State = st.to
	if st.owned {
		n.Owner = owner
	}
	if change != nil {
		change(&n)
	}
	ops := append([]storage.Op{{Kind: storage.OpUpdate, Entity: n.entity(), ETag: p.ETag}}, extra...)
	etags, err := s.state(pkPlies).Transact(ctx, pkPlies, ops)
	if err != nil {
		return fmt.Errorf("moving ply %d from %s to %s: %w", p.Ply, p.State, st.to, conflict(err))
	}
	n.ETag = etags[0]
	*p = n
	return nil
}

// StartMerging moves p on ExpansionComplete. owner then enqueues the
// first scan.
func (s *Store) StartMerging(ctx context.Context, p *Ply, owner string) error {
	return s.transition(ctx, p, ExpansionComplete, owner, nil)
}

// Finish moves p on MergeComplete, with the ply's totals; when next is
// not nil, the next ply's record is added in the same transaction,
// Expanding. owner then sweeps the ply's spent blobs and enqueues the
// next work.
func (s *Store) Finish(ctx context.Context, p *Ply, owner string, t Totals, next *Ply) error {
	var extra []storage.Op
	if next != nil {
		next.State, next.Owner = Expanding, ""
		extra = append(extra, storage.Op{Kind: storage.OpAdd, Entity: next.entity()})
	}
	return s.transition(ctx, p, MergeComplete, owner, func(n *Ply) { n.Totals = t }, extra...)
}

// MarkDispatched moves p on NextEnqueued, once its owner has enqueued
// the next work.
func (s *Store) MarkDispatched(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, NextEnqueued, "", nil)
}

// Resolve moves p on ResolutionComplete, with the ply's result counts.
// owner then enqueues the previous ply's resolution.
func (s *Store) Resolve(ctx context.Context, p *Ply, owner string, c Counts) error {
	return s.transition(ctx, p, ResolutionComplete, owner, func(n *Ply) { n.Counts = c })
}

// Close moves p on PreviousEnqueued, once its owner has enqueued the
// previous ply's resolution (or, at ply 0, marked the run complete).
func (s *Store) Close(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, PreviousEnqueued, "", nil)
}

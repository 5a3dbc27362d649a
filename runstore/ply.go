package runstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/reversi-cloud/reversi/packed"
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
// the whole record at plySchema's version. Which of its fields are fixed,
// from which state on, is in plycache.go, which serves them from memory
// (Store.PlySince).
type Ply struct {
	Ply   int
	ETag  string
	State State
	Owner string // who made the last owned transition, or took its follow-up over (lifecycle.go)
	// Until is when Owner's lease on the follow-up runs out: after it,
	// anyone may take the follow-up over (TakeOver). Zero in records
	// written before leases, whose follow-up anyone may take over.
	Until time.Time
	Tasks int // expansion tasks that feed this ply; fixed with the record
	// Buckets is how many buckets the ply's splitters cut it into; each
	// is merged by one task. Fixed with the record.
	Buckets int
	// Levels are the ply's combine levels (Sizes.Levels), none when its
	// buckets merge the expansion runs directly. Fixed with the record,
	// which holds the first as Groups and Ranges, the others as Upper.
	Levels []CombineLevel
	// TerminalSources says the ply's backtracking rows name the parents
	// of its terminal positions only, in order, and nothing for the
	// others: at the target ply of a run that does not solve, no other
	// position has a result to send back, and their rows would be most of
	// the run's disk. Fixed with the record.
	TerminalSources bool
	// RefsMarkTerminal says, of a ply with TerminalSources, that its
	// expansion runs tell its terminal positions by their refs: an edge
	// to a terminal position names its parent with the index plus one
	// (RunRef), and one to any other names none, Ref{}. The merges then
	// know a position terminal by its refs, with no terminal test of each
	// position; before it, Ref{} also named the first position of blob 0,
	// so they tested them all. Fixed with the record; false in records
	// written before it.
	RefsMarkTerminal bool
	Totals
	Counts
}

// KeepsSources reports whether a position of the ply, terminal or not,
// has backtracking rows: every position does, unless TerminalSources
// keeps the terminal ones only. The merges that write the rows and the
// readers that count through them both go by it.
func (p *Ply) KeepsSources(terminal bool) bool { return terminal || !p.TerminalSources }

// RefsTellTerminal reports whether the ply's expansion runs tell its
// terminal positions by their refs: RefsMarkTerminal, in a ply with
// TerminalSources.
func (p *Ply) RefsTellTerminal() bool { return p.TerminalSources && p.RefsMarkTerminal }

// RunRef is the ref with which an edge of the ply's expansion runs names
// parent ref, of a terminal position or not: ref itself, unless only
// terminal positions keep sources (KeepsSources), when an edge to any
// other names none, Ref{}, and an edge to a terminal position names its
// parent's index plus one where RefsTellTerminal. ParentOf is its
// inverse for a position that keeps sources.
func (p *Ply) RunRef(ref packed.Ref, terminal bool) packed.Ref {
	switch {
	case !p.KeepsSources(terminal):
		return packed.Ref{}
	case p.RefsTellTerminal():
		return packed.Ref{Blob: ref.Blob, Index: ref.Index + 1}
	}
	return ref
}

// ParentOf is the parent that ref, a ref of a position that keeps its
// sources, names in the ply's expansion runs (RunRef).
func (p *Ply) ParentOf(ref packed.Ref) packed.Ref {
	if p.RefsTellTerminal() {
		ref.Index--
	}
	return ref
}

// TerminalByRefs reports whether a position is terminal from its refs in
// the ply's runs, all of them in order, where the ply's refs tell it
// (known): a position is terminal unless its first ref is Ref{}.
func (p *Ply) TerminalByRefs(refs []packed.Ref) (terminal, known bool) {
	if !p.RefsTellTerminal() || len(refs) == 0 {
		return false, false
	}
	return refs[0] != (packed.Ref{}), true
}

// plySchema is the ply record's version and its migrations (schema).
// Version 1 is the first that records its version.
var plySchema = schema{
	0: plyFromUnversioned,
	1: plyWithAllSources,
	2: plyWithoutLease,
	3: plyWithOneLevel,
	4: plyWithTestedTerminals,
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

// plyWithoutLease brings a ply record of version 2 to version 3: its
// owner held no lease (Until), so its follow-up may be taken over at once.
func plyWithoutLease(props map[string]any) error {
	props["Until"] = int64(0)
	return nil
}

// plyWithOneLevel brings a ply record of version 3 to version 4: it had
// at most one combine level, no Upper.
func plyWithOneLevel(props map[string]any) error {
	props["Upper"] = ""
	return nil
}

// plyWithTestedTerminals brings a ply record of version 4 to version 5:
// its expansion runs named parents as they are, and its merges tested
// each position for the end of the game (RefsMarkTerminal false).
func plyWithTestedTerminals(props map[string]any) error {
	props["RefsMarkTerminal"] = false
	return nil
}

// untilProp is Until as the record holds it: Unix nanoseconds, 0 for none.
func untilProp(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (p *Ply) entity() storage.Entity {
	var first CombineLevel
	if p.Combining() {
		first = p.Levels[0]
	}
	return storage.Entity{PartitionKey: pkPlies, RowKey: rkPly(p.Ply), Props: plySchema.stamp(map[string]any{
		"State": p.State.String(), "Owner": p.Owner, "Until": untilProp(p.Until), "Tasks": int64(p.Tasks), "Buckets": int64(p.Buckets),
		"Groups": int64(first.Groups), "Ranges": int64(first.Ranges), "Upper": encodeUpper(p.Levels), "TerminalSources": p.TerminalSources, "RefsMarkTerminal": p.RefsMarkTerminal,
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
		TerminalSources: d.bool("TerminalSources"), RefsMarkTerminal: d.bool("RefsMarkTerminal")}
	levels, err := decodeLevels(d.count("Groups"), d.count("Ranges"), d.str("Upper"))
	if err != nil && d.err == nil {
		d.fail(err)
	}
	p.Levels = levels
	if until := d.int("Until"); until > 0 {
		p.Until = time.Unix(0, until)
	}
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
		s.fixed.gone(ply)
		return nil, fmt.Errorf("ply %d has no record in this run: %w", ply, ErrNoPly)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ply %d record: %w", ply, err)
	}
	p, err := decodePly(e)
	if err != nil {
		return nil, err
	}
	s.fixed.see(p)
	return p, nil
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
		s.fixed.see(p)
		out = append(out, p)
	}
	return out, nil
}

// AddFirstPly records ply 0 when the run is seeded, already Merging, as
// if its expansion were complete: its one bucket, the start position,
// needs no expansion. c owns that transition: it merges the bucket
// and finishes the ply.
func (s *Store) AddFirstPly(ctx context.Context, c Claim) (*Ply, error) {
	p := &Ply{Ply: 0, State: stepOn(ExpansionComplete).to, Owner: c.Owner, Until: c.Until, Tasks: 1, Buckets: 1}
	etag, err := s.state(pkPlies).Add(ctx, p.entity())
	if errors.Is(err, storage.ErrExists) {
		return s.Ply(ctx, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("recording ply 0: %w", err)
	}
	p.ETag = etag
	s.fixed.see(p)
	return p, nil
}

// Claim is who makes an owned transition, or takes its follow-up over,
// and until when the follow-up is theirs alone (Ply.Until): one
// visibility timeout of the claimant's message, which the claimant's
// follow-up, a bounded step (pipeline/flow.go), ends well within. The
// clocks of the claimants decide, so they must roughly agree.
type Claim struct {
	Owner string
	Now   time.Time // the claimant's clock
	Until time.Time
}

// transition moves p on e (lifecycle.go), guarded by its ETag, after
// change has set the new figures on a copy; the claim is recorded when
// the transition is owned. On success p is the new record; on any
// failure p is unchanged.
func (s *Store) transition(ctx context.Context, p *Ply, e Event, c Claim, change func(*Ply), extra ...storage.Op) error {
	st, err := stepFrom(p.State, e)
	if err != nil {
		return fmt.Errorf("moving ply %d: %w", p.Ply, err)
	}
	n := *p
	n.State = st.to
	if st.owned {
		n.Owner, n.Until = c.Owner, c.Until
	}
	if change != nil {
		change(&n)
	}
	if err := s.rewrite(ctx, p, &n, extra...); err != nil {
		return fmt.Errorf("moving ply %d from %s to %s: %w", p.Ply, p.State, st.to, err)
	}
	return nil
}

// rewrite replaces p's record with n, guarded by p's ETag, in one
// transaction with extra; on success p is n.
func (s *Store) rewrite(ctx context.Context, p, n *Ply, extra ...storage.Op) error {
	if p.ETag == "" {
		return errFixedParts(p)
	}
	ops := append([]storage.Op{{Kind: storage.OpUpdate, Entity: n.entity(), ETag: p.ETag}}, extra...)
	etags, err := s.state(pkPlies).Transact(ctx, pkPlies, ops)
	if err != nil {
		return conflict(err)
	}
	n.ETag = etags[0]
	*p = *n
	s.fixed.see(p)
	return nil
}

// ErrLeaseHeld: a follow-up's owner still holds its lease.
var ErrLeaseHeld = errors.New("runstore: the follow-up's owner still holds its lease")

// TakeOver makes c the owner of the follow-up that p's state owes, once
// the owner's lease has run out (the owner's message poisoned, lost, or
// its worker gone): the follow-up is idempotent, so a taker-over repeats
// whatever the owner had done of it. It is one ETag-guarded write, so of
// several claimants one wins and the others get ErrConflict. A ply
// whose state owes no follow-up is ErrIllegalTransition; a lease not yet
// out, ErrLeaseHeld.
func (s *Store) TakeOver(ctx context.Context, p *Ply, c Claim) error {
	if !p.Owes() {
		return fmt.Errorf("taking over ply %d: %w: a ply that is %s owes no follow-up", p.Ply, ErrIllegalTransition, p.State)
	}
	if c.Now.Before(p.Until) {
		return fmt.Errorf("taking over ply %d from %s: %w until %s", p.Ply, p.Owner, ErrLeaseHeld, p.Until.Format(time.RFC3339))
	}
	n := *p
	n.Owner, n.Until = c.Owner, c.Until
	if err := s.rewrite(ctx, p, &n); err != nil {
		return fmt.Errorf("taking over ply %d from %s: %w", p.Ply, p.Owner, err)
	}
	return nil
}

// StartMerging moves p on ExpansionComplete. owner then enqueues the
// first scan.
func (s *Store) StartMerging(ctx context.Context, p *Ply, owner Claim) error {
	return s.transition(ctx, p, ExpansionComplete, owner, nil)
}

// Finish moves p on MergeComplete, with the ply's totals; when next is
// not nil, the next ply's record is added in the same transaction,
// Expanding. owner then sweeps the ply's spent blobs and enqueues the
// next work.
func (s *Store) Finish(ctx context.Context, p *Ply, owner Claim, t Totals, next *Ply) error {
	var extra []storage.Op
	if next != nil {
		next.State, next.Owner, next.Until = Expanding, "", time.Time{}
		extra = append(extra, storage.Op{Kind: storage.OpAdd, Entity: next.entity()})
	}
	return s.transition(ctx, p, MergeComplete, owner, func(n *Ply) { n.Totals = t }, extra...)
}

// MarkDispatched moves p on NextEnqueued, once its owner has enqueued
// the next work.
func (s *Store) MarkDispatched(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, NextEnqueued, Claim{}, nil)
}

// Resolve moves p on ResolutionComplete, with the ply's result counts.
// owner then enqueues the previous ply's resolution.
func (s *Store) Resolve(ctx context.Context, p *Ply, owner Claim, c Counts) error {
	return s.transition(ctx, p, ResolutionComplete, owner, func(n *Ply) { n.Counts = c })
}

// Close moves p on PreviousEnqueued, once its owner has enqueued the
// previous ply's resolution (or, at ply 0, marked the run complete).
func (s *Store) Close(ctx context.Context, p *Ply) error {
	return s.transition(ctx, p, PreviousEnqueued, Claim{}, nil)
}

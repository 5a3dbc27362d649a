package runstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// theLifecycle is the lifecycle as the design has it,
// written out here so that a change to the table in lifecycle.go is
// seen to be deliberate.
var theLifecycle = []struct {
	from  State
	on    Event
	to    State
	owned bool
}{
	{Expanding, ExpansionComplete, Merging, true},
	{Merging, MergeComplete, Final, true},
	{Final, NextEnqueued, Dispatched, false},
	{Dispatched, ResolutionComplete, Resolved, true},
	{Resolved, PreviousEnqueued, Closed, false},
}

// TestLifecycleTable tries every event in every state: each state moves
// on exactly its one event, to the next state in the order of the State
// constants (which State.AtLeast relies on); every other event is
// ErrIllegalTransition; Closed moves on none.
func TestLifecycleTable(t *testing.T) {
	for from := Expanding; from <= Closed; from++ {
		for e := ExpansionComplete; e <= PreviousEnqueued; e++ {
			got, err := stepFrom(from, e)
			legal := false
			for _, want := range theLifecycle {
				if want.from != from || want.on != e {
					continue
				}
				legal = true
				if err != nil || got.to != want.to || got.owned != want.owned {
					t.Errorf("%s on %s: to %s (owned %v), %v; want %s (owned %v)", from, e, got.to, got.owned, err, want.to, want.owned)
				}
				if want.to != from+1 {
					t.Errorf("%s on %s leads to %s, not the next state", from, e, want.to)
				}
			}
			if !legal && !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("%s on %s: to %s, %v; want ErrIllegalTransition", from, e, got.to, err)
			}
		}
	}
	if len(lifecycle) != len(theLifecycle) {
		t.Errorf("the lifecycle has %d transitions, want %d", len(lifecycle), len(theLifecycle))
	}
}

// TestAwaits: a ply awaits exactly the event that moves it on from its
// state, and a Closed ply awaits none.
func TestAwaits(t *testing.T) {
	for from := Expanding; from <= Closed; from++ {
		p := &Ply{State: from}
		for e := ExpansionComplete; e <= PreviousEnqueued; e++ {
			_, err := stepFrom(from, e)
			if got := p.Awaits(e); got != (err == nil) {
				t.Errorf("a ply that is %s awaits %s: %v, want %v", from, e, got, err == nil)
			}
		}
	}
	if (&Ply{State: Expanding}).Awaits(Event(0)) {
		t.Error("a ply awaits a value that is no event")
	}
}

// TestStagesEndInTheirTransition: each stage's items are worked on while
// the ply is in the state that the stage's completion moves it on from,
// so that the item that completes the stage finds the ply awaiting its
// event; the combine stage is worked on within Merging, before the merge
// stage completes.
func TestStagesEndInTheirTransition(t *testing.T) {
	for _, tc := range []struct {
		stage    string
		from, to State
		ends     Event
	}{
		{"expansion", expansionKind.from, expansionKind.to, ExpansionComplete},
		{"combine", combineKinds[0].from, combineKinds[0].to, MergeComplete},
		{"upper combine", combineKinds[MaxCombineLevels-1].from, combineKinds[MaxCombineLevels-1].to, MergeComplete},
		{"merge", mergeKind.from, mergeKind.to, MergeComplete},
		{"resolution", resolutionKind.from, resolutionKind.to, ResolutionComplete},
	} {
		if at := stepOn(tc.ends).from; at < tc.from || at > tc.to {
			t.Errorf("the %s stage is worked on from %s to %s, but %s moves a ply from %s", tc.stage, tc.from, tc.to, tc.ends, at)
		}
	}
}

// moves makes each event's transition through the store's method for it.
var moves = map[Event]func(s *Store, ctx context.Context, p *Ply) error{
	ExpansionComplete: func(s *Store, ctx context.Context, p *Ply) error { return s.StartMerging(ctx, p, Claim{Owner: "m"}) },
	MergeComplete: func(s *Store, ctx context.Context, p *Ply) error {
		return s.Finish(ctx, p, Claim{Owner: "f"}, Totals{Finals: 2}, nil)
	},
	NextEnqueued: func(s *Store, ctx context.Context, p *Ply) error { return s.MarkDispatched(ctx, p) },
	ResolutionComplete: func(s *Store, ctx context.Context, p *Ply) error {
		return s.Resolve(ctx, p, Claim{Owner: "r"}, Counts{White: 3})
	},
	PreviousEnqueued: func(s *Store, ctx context.Context, p *Ply) error { return s.Close(ctx, p) },
}

// TestLifecycle walks a stored ply through every state, and from every
// state tries every transition method: only the one for the event the
// ply awaits moves it, to the state the lifecycle says, recording its
// owner when the transition is owned and keeping the last owner when not;
// the others are ErrIllegalTransition and change nothing; a transition
// from a stale copy is ErrConflict.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	p, err := s.AddFirstPly(ctx, Claim{Owner: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	// AddFirstPly is idempotent: the second call reads the record back.
	if again, err := s.AddFirstPly(ctx, Claim{Owner: "other"}); err != nil || again.Owner != "seed" || again.State != Merging {
		t.Fatalf("second AddFirstPly: %+v, %v", again, err)
	}
	// Ply 0 starts Merging; put a ply 1 through the whole cycle instead,
	// added by ply 0's Finish as the flow does.
	next := &Ply{Ply: 1, Tasks: 7}
	if err := s.Finish(ctx, p, Claim{Owner: "seed"}, Totals{Finals: 1, Positions: 1}, next); err != nil {
		t.Fatal(err)
	}
	one, err := s.Ply(ctx, 1)
	if err != nil || one.State != Expanding || one.Tasks != 7 {
		t.Fatalf("ply 1 after ply 0's Finish: %+v, %v", one, err)
	}
	owner := ""
	for _, step := range theLifecycle {
		if one.State != step.from {
			t.Fatalf("state %s, want %s", one.State, step.from)
		}
		for e, move := range moves {
			if e == step.on {
				continue
			}
			before := *one
			if err := move(s, ctx, one); !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("%s on %s: %v, want ErrIllegalTransition", one.State, e, err)
			}
			if !reflect.DeepEqual(*one, before) {
				t.Errorf("%s on %s: the refused transition changed the record to %+v", before.State, e, *one)
			}
		}
		stale := *one
		if err := moves[step.on](s, ctx, one); err != nil {
			t.Fatalf("%s on %s: %v", step.from, step.on, err)
		}
		if step.owned {
			owner = one.Owner
		}
		if one.State != step.to || one.Owner != owner || (step.owned && owner == "") {
			t.Errorf("%s on %s: %s owned by %q; want %s owned by %q", step.from, step.on, one.State, one.Owner, step.to, owner)
		}
		if err := moves[step.on](s, ctx, &stale); !errors.Is(err, ErrConflict) {
			t.Errorf("%s on %s from a stale copy: %v, want ErrConflict", step.from, step.on, err)
		}
		stored, err := s.Ply(ctx, 1)
		if err != nil || !reflect.DeepEqual(*stored, *one) {
			t.Fatalf("stored %+v (%v), want %+v", stored, err, one)
		}
	}
	for e, move := range moves {
		if err := move(s, ctx, one); !errors.Is(err, ErrIllegalTransition) {
			t.Errorf("closed on %s: %v, want ErrIllegalTransition", e, err)
		}
	}
	if one.Owner != "r" || one.White != 3 || one.Finals != 2 {
		t.Errorf("closed ply %+v: owner, counts or totals lost", one)
	}
}

// TestOwes: the states whose follow-up ends in a transition out of them
// are owed, and only they.
func TestOwes(t *testing.T) {
	for s := Expanding; s <= Closed; s++ {
		want := s == Final || s == Resolved
		if got := (&Ply{State: s}).Owes(); got != want {
			t.Errorf("a ply that is %s owes a follow-up: %v, want %v", s, got, want)
		}
	}
}

// TestTakeOver: a follow-up whose owner's lease holds is refused to
// others; once it has run out, one claimant takes it over, with its own
// lease, and a claimant with a stale copy gets ErrConflict; a record
// without a lease (written before leases) is taken over at once; a ply
// that owes no follow-up is never taken over.
func TestTakeOver(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	t0 := time.Unix(1_700_000_000, 0)
	claim := func(owner string, at time.Duration) Claim {
		return Claim{Owner: owner, Now: t0.Add(at), Until: t0.Add(at + time.Minute)}
	}
	p, err := s.AddFirstPly(ctx, claim("seed", 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TakeOver(ctx, p, claim("early", 0)); !errors.Is(err, ErrIllegalTransition) {
		t.Errorf("taking over a merging ply: %v, want ErrIllegalTransition", err)
	}
	if err := s.Finish(ctx, p, claim("s", 0), Totals{Finals: 1, Positions: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if !p.Until.Equal(t0.Add(time.Minute)) || p.Owner != "s" {
		t.Fatalf("Finish recorded owner %q until %s, want s until %s", p.Owner, p.Until, t0.Add(time.Minute))
	}
	if err := s.TakeOver(ctx, p, claim("x", 59*time.Second)); !errors.Is(err, ErrLeaseHeld) {
		t.Errorf("taking over within the lease: %v, want ErrLeaseHeld", err)
	}
	stale := *p
	if err := s.TakeOver(ctx, p, claim("x", time.Minute)); err != nil {
		t.Fatalf("taking over once the lease ran out: %v", err)
	}
	if stored, err := s.Ply(ctx, 0); err != nil || stored.Owner != "x" || !stored.Until.Equal(t0.Add(2*time.Minute)) || stored.State != Final {
		t.Errorf("after the takeover: %+v, %v; want final, owned by x until %s", stored, err, t0.Add(2*time.Minute))
	}
	if err := s.TakeOver(ctx, &stale, claim("y", time.Minute)); !errors.Is(err, ErrConflict) {
		t.Errorf("a second claimant with a stale copy: %v, want ErrConflict", err)
	}
	legacy := *p
	legacy.Until = time.Time{}
	if err := s.rewrite(ctx, p, &legacy); err != nil {
		t.Fatal(err)
	}
	if err := s.TakeOver(ctx, p, claim("z", -time.Hour)); err != nil || p.Owner != "z" {
		t.Errorf("taking over a record without a lease: %v, owner %q", err, p.Owner)
	}
	if err := s.MarkDispatched(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.TakeOver(ctx, p, claim("late", time.Hour)); !errors.Is(err, ErrIllegalTransition) {
		t.Errorf("taking over a dispatched ply: %v, want ErrIllegalTransition", err)
	}
}

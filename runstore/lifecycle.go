package runstore

import (
	"fmt"
	"strconv"
)

// A ply's lifecycle: its states, the transitions between them and the
// event that makes each. This file is the one place that says which
// state follows which, and on what; the store's transition methods
// (ply.go) refuse any other move, and the flow (pipeline/flow.go) asks a
// ply which event it awaits (Ply.Awaits) instead of naming states.
//
//	from        event                to          owned  made by
//	Expanding   ExpansionComplete    Merging     yes    the last expansion task
//	Merging     MergeComplete        Final       yes    a scan that finds every bucket merged
//	Final       NextEnqueued         Dispatched  no     the last leaf of the owner's dispatch
//	                                                    (dispatch.go), once the next work is
//	                                                    enqueued
//	Dispatched  ResolutionComplete   Resolved    yes    the last resolution
//	Resolved    PreviousEnqueued     Closed      no     the last leaf of the owner's back
//	                                                    stage, once the previous ply's
//	                                                    resolution is enqueued (at ply 0:
//	                                                    the owner, once the run is marked
//	                                                    complete)
//
// A ply's record is added Expanding, with the transition of the ply
// before it into Final (Store.Finish); ply 0 needs no expansion and is
// added Merging, as if its expansion were complete (AddFirstPly). The
// combine stage's completion moves no ply: it is a step within Merging,
// after which the scan enqueues the bucket merges.
//
// Invariants:
//   - every transition is one ETag-guarded write, so each happens
//     exactly once, however many writers see its event;
//   - a state has one transition out, to the next state in the order of
//     the State constants, so that State.AtLeast compares progress;
//   - an owned transition records the message that made it (Ply.Owner),
//     and that message owes the follow-up of the state it led to (the
//     first scan; enqueuing the next work; enqueuing the previous ply's
//     resolution). The follow-up ends with the transition out of that
//     state where it has one (NextEnqueued, PreviousEnqueued), made by
//     whoever finishes its last part (a follow-up that grows with the
//     ply is fanned out over leaves: dispatch.go), so a redelivery of
//     the owner's message finishes a follow-up that a crash
//     interrupted;
//   - the owner holds its follow-up under a lease (Ply.Until, stamped
//     with the owned transition): once the lease has run out, because
//     the owner's message was poisoned, lost, or is slow, anyone may
//     take the follow-up over (Store.TakeOver, ETag-guarded, which
//     rewrites the owner and its lease) and repeat it: every follow-up
//     is idempotent. The stall nudge's scans do so (pipeline/stall.go),
//     as does any message put back on the queue for the ply.

// State is where a ply stands in its lifecycle:
//
//	Expanding  expansion runs arrive from the previous ply's expansion tasks
//	Merging    every expansion task is done; combines (if the ply has
//	           a combine level), then merges, remove duplicates
//	Final      the final blobs are fixed; the next work is being enqueued
//	Dispatched the next ply's expansion (or, at the target, this ply's
//	           resolution) is enqueued; results are awaited
//	Resolved   every final blob's results are known; the previous ply's
//	           resolution is being enqueued
//	Closed     the previous ply's resolution is enqueued (at ply 0: the
//	           run is marked complete)
type State int

// The ply states, in the order of the lifecycle.
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

// Event is what moves a ply from one state to the next: the completion
// of one of its stages (Stage), or the end of the follow-up that its
// state owes.
type Event int

// The events, in the order of the lifecycle.
const (
	// ExpansionComplete: every expansion task of the ply is done.
	ExpansionComplete Event = iota + 1
	// MergeComplete: every bucket of the ply is merged, and a scan saw
	// it: the merged blobs become the final blobs.
	MergeComplete
	// NextEnqueued: the work that follows a Final ply is enqueued: the
	// next ply's expansion or, at the target, the ply's resolution.
	NextEnqueued
	// ResolutionComplete: every final blob of the ply is resolved.
	ResolutionComplete
	// PreviousEnqueued: the previous ply's resolution is enqueued or, at
	// ply 0, the run is marked complete.
	PreviousEnqueued
)

var eventNames = [...]string{ExpansionComplete: "expansion complete", MergeComplete: "merge complete",
	NextEnqueued: "next work enqueued", ResolutionComplete: "resolution complete", PreviousEnqueued: "previous resolution enqueued"}

func (e Event) String() string {
	if e < ExpansionComplete || e > PreviousEnqueued {
		return "event(" + strconv.Itoa(int(e)) + ")"
	}
	return eventNames[e]
}

// step is one transition of the lifecycle.
type step struct {
	from State
	on   Event
	to   State
	// owned: the transition records its maker as the ply's Owner, who
	// owes the follow-up of to.
	owned bool
}

// lifecycle is every transition a ply makes, in order (see the table
// above).
var lifecycle = [...]step{
	{Expanding, ExpansionComplete, Merging, true},
	{Merging, MergeComplete, Final, true},
	{Final, NextEnqueued, Dispatched, false},
	{Dispatched, ResolutionComplete, Resolved, true},
	{Resolved, PreviousEnqueued, Closed, false},
}

// stepOn is the transition that e makes; the zero step, from no state,
// for a value that is no event.
func stepOn(e Event) step {
	for _, st := range lifecycle {
		if st.on == e {
			return st
		}
	}
	return step{}
}

// stepFrom is the transition that e makes from state from, or
// ErrIllegalTransition when the lifecycle has none.
func stepFrom(from State, e Event) (step, error) {
	for _, st := range lifecycle {
		if st.from == from && st.on == e {
			return st, nil
		}
	}
	return step{}, fmt.Errorf("%w: a ply that is %s does not move on %s (only one that is %s does)", ErrIllegalTransition, from, e, stepOn(e).from)
}

// Owes reports whether p's state owes a follow-up that ends with the
// transition out of it (Final, Resolved): until that transition, its
// owner, or whoever takes it over, has work to do.
func (p *Ply) Owes() bool {
	for i, st := range lifecycle {
		if st.to == p.State && st.owned && i+1 < len(lifecycle) && !lifecycle[i+1].owned {
			return true
		}
	}
	return false
}

// Awaits reports whether e moves p on: p is in the state that e's
// transition leaves.
func (p *Ply) Awaits(e Event) bool { return p.State == stepOn(e).from }

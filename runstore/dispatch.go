package runstore

import (
	"context"
	"fmt"
)

// Dispatch: the follow-ups that grow with a ply, cut into leaves of at
// most DispatchFan units each, so that no handling does more than a
// bounded part of them:
//
//	stage     worked while the ply is  a unit                        then
//	dispatch  Final                    a final blob: enqueue its     NextEnqueued
//	                                   next work; a bucket, an
//	                                   expansion or combine task, the
//	                                   working blobs: sweep their blobs
//	back      Resolved                 a final blob of the previous  PreviousEnqueued
//	                                   ply: enqueue its resolution
//
// Each leaf is an item of its stage (Stage), done once its marker exists,
// so a redelivery or a duplicate skips it, and the leaf whose marker
// completes the stage makes the transition (AllDone). The flow
// (pipeline/dispatch.go) reaches the leaves through a tree of ranges of
// leaves, each cut into at most DispatchFan parts.

// DispatchFan is how many units one leaf covers, and into how many
// parts a range of leaves is cut.
const DispatchFan = 64

// Dispatch is the marker of a done leaf of a dispatch or back stage.
type Dispatch struct{ Leaf int }

// DispatchUnits are a dispatch leaf's units, by kind; each span indexes
// the ply's items of its kind.
type DispatchUnits struct {
	Finals     Span // final blobs whose next work to enqueue
	Buckets    Span // buckets whose merges' losing outputs to sweep
	Expansions Span // expansion tasks whose runs to sweep
	Combines   Span // combine tasks whose runs to sweep, numbered ply-wide (Ply.CombineIndex)
	Working    bool // the working blobs to sweep: splitters and merge inputs
	// Whole says the leaf is the whole dispatch: its sweep lists the
	// ply's folder at once, as cheap as one prefix for a small ply.
	Whole bool
}

// dispatchUnits is how many units a Final ply's dispatch has: the
// working blobs are one.
func dispatchUnits(p *Ply) int { return p.Finals + p.Buckets + p.Tasks + p.CombineTasks() + 1 }

// leaves is how many leaves of DispatchFan units n units make.
func leaves(n int) int { return (n + DispatchFan - 1) / DispatchFan }

// DispatchLeaf is the units of leaf of p's dispatch.
func (p *Ply) DispatchLeaf(leaf int) DispatchUnits {
	lo, hi := leaf*DispatchFan, min((leaf+1)*DispatchFan, dispatchUnits(p))
	at := 0
	// next is the part of [lo, hi) among the n units from at, as
	// indexes of those units.
	next := func(n int) Span {
		s := Span{Lo: min(max(lo-at, 0), n), Hi: min(max(hi-at, 0), n)}
		at += n
		if s.Lo >= s.Hi {
			return Span{}
		}
		return s
	}
	var u DispatchUnits
	u.Finals = next(p.Finals)
	u.Buckets = next(p.Buckets)
	u.Expansions = next(p.Tasks)
	u.Combines = next(p.CombineTasks())
	u.Working = next(1) != Span{}
	u.Whole = lo == 0 && hi == dispatchUnits(p)
	return u
}

// BackLeaf is the previous ply's final blobs whose resolution leaf of
// p's back stage enqueues: the previous ply has one final blob for each
// of p's expansion tasks.
func (p *Ply) BackLeaf(leaf int) Span {
	return Span{Lo: leaf * DispatchFan, Hi: min((leaf+1)*DispatchFan, p.Tasks)}
}

// DispatchStage is the dispatch of Final ply p: one item per leaf of
// DispatchFan units (DispatchLeaf).
func (s *Store) DispatchStage(p *Ply) Stage[Dispatch] { return newStage(s, p, &dispatchKind) }

// BackStage is the back stage of Resolved ply p: one item per leaf of
// DispatchFan of the previous ply's final blobs (BackLeaf); none at ply
// 0.
func (s *Store) BackStage(p *Ply) Stage[Dispatch] { return newStage(s, p, &backKind) }

var dispatchKind = leafKind("dispatch leaf", Final, func(p *Ply) int { return leaves(dispatchUnits(p)) },
	func(s *Store, ply int) stageMarkers { return s.dispatchMarkers(ply) })

// Ply 0 has no previous ply: its back stage has no leaves.
var backKind = leafKind("back leaf", Resolved, func(p *Ply) int { return leaves(min(p.Ply, 1) * p.Tasks) },
	func(s *Store, ply int) stageMarkers { return s.backMarkers(ply) })

// leafKind is a stage of leaves worked on while the ply is in state at.
func leafKind(item string, at State, items func(*Ply) int, rows func(*Store, int) stageMarkers) stageKind[Dispatch] {
	return stageKind[Dispatch]{
		item:  item,
		items: items,
		from:  at, to: at,
		early: func(p *Ply) string {
			return fmt.Sprintf("ply %d is %s: no %s is worked on before it is %s", p.Ply, p.State, item, at)
		},
		missing: func(p *Ply, i int) string {
			return fmt.Sprintf("ply %d has %d %ss, not %d", p.Ply, items(p), item, i+1)
		},
		rows:   rows,
		index:  func(d Dispatch) int { return d.Leaf },
		encode: func(Dispatch) (map[string]any, error) { return map[string]any{}, nil },
		decode: func(_ *decoder, i int) Dispatch { return Dispatch{Leaf: i} },
	}
}

// NamedIn is Named for the final blobs of buckets span of a Final ply:
// the committed outputs of those buckets' merges, which are the ply's
// final blobs. It reads the buckets' markers alone, one a bucket: a
// merge names its k-th output FinalRunBlobName(ply, bucket, k, attempt)
// (the seed's one output of ply 0 too), so the winner's attempt and
// outputs name them all, where reading the output rows would cost a
// row per final blob and one per output of each losing attempt.
// Markers committed before that naming (ply 0's, on runs seeded before
// it) are read with their rows.
func (s *Store) NamedIn(ctx context.Context, p *Ply, span Span) (map[string]bool, error) {
	merges, err := s.MergeStage(p).MarkersIn(ctx, span)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for _, m := range merges {
		for k := range int(m.Outputs) {
			named[FinalRunBlobName(p.Ply, m.Bucket, k, m.Attempt)] = true
		}
	}
	if p.Ply == 0 {
		merged, err := s.MergedBlobsIn(ctx, p.Ply, span)
		if err != nil {
			return nil, err
		}
		for _, m := range merged {
			named[m.Blob] = true
		}
	}
	return named, nil
}

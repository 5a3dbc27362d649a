package runstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// BlobInUse is the one rule that says whether a blob is still needed; the
// audit and the ply's sweep decide by it, and the compensation handler by
// Keep, which reads only the one marker a blob's name points at. p is the record
// of the blob's ply (nil if the ply has none), and named is the set of
// blob names that the ply's records name (see Named).
//
//   - No ply record: nothing can name the blob.
//   - Results: needed once the ply is Final, for each of its final blobs.
//   - Splitters and the merge and combine inputs: needed while the ply
//     is cut into buckets and merged, that is until the ply is Final.
//   - Anything else: needed while a record names it: a final blob row once
//     the ply is Final; before, an expansion or combine marker or a
//     committed merge output.
func BlobInUse(p *Ply, name string, named map[string]bool) bool {
	b, ok := ParseBlobName(name)
	switch {
	case !ok || p == nil || b.Ply != p.Ply:
		return false
	case b.Kind == ResultsBlob:
		return p.State.AtLeast(Final) && b.Index < p.Finals
	case b.Kind == SplittersBlob || b.Kind == InputsBlob || b.Kind == CombineInputsBlob:
		return !p.State.AtLeast(Final)
	default:
		return named[name]
	}
}

// combines reads the combine markers of every level of p.
func (s *Store) combines(ctx context.Context, p *Ply) ([]Combine, error) {
	var out []Combine
	for level := range p.Levels {
		cs, err := s.CombineStage(p, level).Markers(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Records are what a ply's rows say about its blobs; Named and Spent
// read only the fields that matter in the ply's state.
type Records struct {
	Expansions []Expansion
	Combines   []Combine
	Merges     []BucketMerge // read only for a ply with a combine level
	Merged     []*MergedBlob
	Finals     []FinalBlob
}

// Named is the set of blob names that a ply's records name and that a
// merge may still read: its final blob rows once it is Final; before, its
// expansion and combine markers and committed merge outputs, less the
// Spent ones.
func Named(p *Ply, recs Records) map[string]bool {
	named := map[string]bool{}
	if p.State.AtLeast(Final) {
		for _, f := range recs.Finals {
			named[f.Blob] = true
		}
		return named
	}
	spent := Spent(p, recs)
	for _, e := range recs.Expansions {
		named[e.Blob] = !spent[e.Blob]
	}
	for _, c := range recs.Combines {
		named[c.Blob] = !spent[c.Blob]
	}
	for _, r := range recs.Merged {
		named[r.Blob] = true
	}
	return named
}

// Spent is the set of blobs of a merging ply with combine levels that
// its markers name but that no merge reads again, so that they may be
// deleted before the ply is Final (the disk then follows the work):
//
//   - the expansion runs of group g of the first level (the tasks
//     Children(0, g)), once every task of g is done (the level's tasks
//     g*Ranges to g*Ranges+Ranges-1);
//   - a level's run of range r, below the last level, once every task of
//     the level above that reads it is done: those of the group holding
//     the run's group (Children) whose ranges overlap r (Overlapping);
//   - the last level's runs of range r, once every bucket of r is merged
//     (the buckets SpanOf(r, Buckets, Ranges)).
//
// A merge or combine attempt that lost its race may still be reading a
// spent blob when it is deleted; it fails, and its redelivery finds the
// marker that made the blob spent. A scan reads markers, never these
// blobs. Only markers are added while a ply merges, so a blob once spent
// stays spent.
func Spent(p *Ply, recs Records) map[string]bool {
	spent := map[string]bool{}
	if p.State != Merging || !p.Combining() {
		return spent
	}
	done := make([]map[int]bool, len(p.Levels)) // the tasks done, by level
	for level := range done {
		done[level] = map[int]bool{}
	}
	for _, c := range recs.Combines {
		if c.Level < len(p.Levels) {
			done[c.Level][c.Index] = true
		}
	}
	// all reports whether tasks [lo, hi) of level are done.
	all := func(level, lo, hi int) bool {
		for j := lo; j < hi; j++ {
			if !done[level][j] {
				return false
			}
		}
		return true
	}
	first := p.Levels[0]
	for _, e := range recs.Expansions {
		if e.Blob != "" && e.Task < p.Tasks {
			g := PartOf(e.Task, p.Tasks, first.Groups)
			spent[e.Blob] = all(0, g*first.Ranges, (g+1)*first.Ranges)
		}
	}
	top := len(p.Levels) - 1
	merged := make([]int, p.Top().Ranges) // buckets merged, per range of the last level
	for _, m := range recs.Merges {
		if m.Bucket < p.Buckets {
			merged[PartOf(m.Bucket, p.Buckets, p.Top().Ranges)]++
		}
	}
	for _, c := range recs.Combines {
		if c.Blob == "" || c.Level >= len(p.Levels) || c.Index >= p.Levels[c.Level].Tasks() {
			continue
		}
		l := p.Levels[c.Level]
		r := c.Index % l.Ranges
		if c.Level < top {
			up := p.Levels[c.Level+1]
			pg := PartOf(c.Index/l.Ranges, l.Groups, up.Groups)
			over := p.Overlapping(c.Level, r)
			spent[c.Blob] = all(c.Level+1, pg*up.Ranges+over.Lo, pg*up.Ranges+over.Hi)
			continue
		}
		span := SpanOf(r, p.Buckets, l.Ranges)
		spent[c.Blob] = merged[r] == span.Hi-span.Lo
	}
	return spent
}

// MergeRecords reads the records that name a ply's blobs before it is
// Final: its expansion markers, its committed merge outputs and, with a
// combine level, its combine and bucket markers.
func (s *Store) MergeRecords(ctx context.Context, p *Ply) (Records, error) {
	var recs Records
	var err error
	if recs.Expansions, err = s.ExpansionStage(p).Markers(ctx); err != nil {
		return recs, err
	}
	if p.Combining() {
		if recs.Combines, err = s.combines(ctx, p); err != nil {
			return recs, err
		}
		if recs.Merges, err = s.MergeStage(p).Markers(ctx); err != nil {
			return recs, err
		}
	}
	if recs.Merged, err = s.MergedBlobs(ctx, p); err != nil {
		return recs, err
	}
	return recs, nil
}

// Keep decides, for the compensation message of blob name that
// surfaced, whether the blob stays; once it says no, nothing will ever
// name the blob, and it may be deleted. It reads the one marker the
// blob's name points at, never the stage's.
//
// A blob that a compensation message covers (BlobName.Covered) stays
// when its item's marker names the blob's attempt. Otherwise Keep first
// fences the attempt: it adds the row that the attempt's commit adds in
// one transaction with its marker (Stage.Commit). Exactly one of the two
// adds it: either the marker landed and the blob stays, or the fence did
// and the commit fails, however late it comes. A spent blob that its
// marker names stays too: the ply's sweep deletes it.
//
// Any other blob follows BlobInUse on its ply's record.
//
// Crash points: the fence is added once; a redelivery finds it and
// decides again by the marker, the same way.
func (s *Store) Keep(ctx context.Context, name string) (bool, error) {
	b, ok := ParseBlobName(name)
	switch {
	case !ok:
		return false, nil
	case !b.Covered():
		p, err := s.Ply(ctx, b.Ply)
		if errors.Is(err, ErrNoPly) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return BlobInUse(p, name, nil), nil
	case b.Kind == ExpansionBlob:
		return keep(ctx, s, &expansionKind, b)
	case b.Kind == CombineBlob:
		// The name numbers the task ply-wide: its level is the ply's.
		p, err := s.Ply(ctx, b.Ply)
		if errors.Is(err, ErrNoPly) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		level, j, ok := p.CombineAt(b.Index)
		if !ok {
			return false, nil
		}
		b.Index = j
		return keep(ctx, s, &combineKinds[level], b)
	default:
		return keep(ctx, s, &mergeKind, b)
	}
}

// keep is Keep for a covered blob b of a stage of kind k.
func keep[M any](ctx context.Context, s *Store, k *stageKind[M], b BlobName) (bool, error) {
	rows := k.rows(s, b.Ply)
	pk := rows.pk(b.Index)
	fenced, err := addOnce(ctx, s.state, storage.Entity{PartitionKey: pk, RowKey: rows.fence(b.Index, b.Attempt), Props: map[string]any{}})
	if err != nil || fenced {
		return false, err
	}
	// The fence was there: added by the attempt's commit with its
	// marker, or by an earlier delivery of a compensation message.
	e, err := s.state(pk).Get(ctx, pk, markerKey(rows.item, b.Index))
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the marker of %s %d of ply %d: %w", k.item, b.Index, b.Ply, err)
	}
	d := decode(e, s.board)
	m := k.decode(d, b.Index)
	if err := d.done(k.item + " marker " + e.RowKey); err != nil {
		return false, err
	}
	return k.attempt(m) == b.Attempt, nil
}

package runstore

import (
	"context"
	"errors"
)

// BlobInUse is the one rule that says whether a blob is still needed; the
// compensation handler and the audit both decide by it. p is the record
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

// Spent is the set of blobs of a merging ply with a combine level that
// its markers name but that no merge reads again, so that they may be
// deleted before the ply is Final (the disk then follows the work):
//
//   - group g's expansion runs, once every combine task of g is done
//     (combine tasks g*Ranges to g*Ranges+Ranges-1; group g is the tasks
//     SpanOf(g, Tasks, Groups));
//   - range r's combined runs, once every bucket of r is merged (the
//     buckets SpanOf(r, Buckets, Ranges)).
//
// A merge or combine attempt that lost its race may still be reading a
// spent blob when it is deleted; it fails, and its redelivery finds the
// marker that made the blob spent. A scan reads markers, never these
// blobs. Only markers are added while a ply merges, so a blob once spent
// stays spent.
func Spent(p *Ply, recs Records) map[string]bool {
	spent := map[string]bool{}
	if p.State != Merging || p.Groups == 0 || p.Ranges == 0 {
		return spent
	}
	combined := make([]int, p.Groups) // combine tasks done, per group
	for _, c := range recs.Combines {
		if g := c.Index / p.Ranges; g < p.Groups {
			combined[g]++
		}
	}
	for _, e := range recs.Expansions {
		if e.Blob != "" && e.Task < p.Tasks && combined[PartOf(e.Task, p.Tasks, p.Groups)] == p.Ranges {
			spent[e.Blob] = true
		}
	}
	merged := make([]int, p.Ranges) // buckets merged, per range
	for _, m := range recs.Merges {
		if m.Bucket < p.Buckets {
			merged[PartOf(m.Bucket, p.Buckets, p.Ranges)]++
		}
	}
	for _, c := range recs.Combines {
		r := c.Index % p.Ranges
		if span := SpanOf(r, p.Buckets, p.Ranges); c.Blob != "" && merged[r] == span.Hi-span.Lo {
			spent[c.Blob] = true
		}
	}
	return spent
}

// blobNames reads what Named needs for p and applies it.
func (s *Store) blobNames(ctx context.Context, p *Ply) (map[string]bool, error) {
	if p.State.AtLeast(Final) {
		finals, err := s.Finals(ctx, p.Ply)
		if err != nil {
			return nil, err
		}
		return Named(p, Records{Finals: finals}), nil
	}
	recs, err := s.MergeRecords(ctx, p)
	if err != nil {
		return nil, err
	}
	return Named(p, recs), nil
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
	if p.Groups > 0 {
		if recs.Combines, err = s.CombineStage(p).Markers(ctx); err != nil {
			return recs, err
		}
		if recs.Merges, err = s.MergeStage(p).Markers(ctx); err != nil {
			return recs, err
		}
	}
	if recs.Merged, err = s.MergedBlobs(ctx, p.Ply); err != nil {
		return recs, err
	}
	return recs, nil
}

// InUse applies BlobInUse to one blob, reading what it needs.
func (s *Store) InUse(ctx context.Context, name string) (bool, error) {
	b, ok := ParseBlobName(name)
	if !ok {
		return false, nil
	}
	p, err := s.Ply(ctx, b.Ply)
	if errors.Is(err, ErrNoPly) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var named map[string]bool
	if b.Kind != ResultsBlob && b.Kind != SplittersBlob && b.Kind != InputsBlob && b.Kind != CombineInputsBlob {
		if named, err = s.blobNames(ctx, p); err != nil {
			return false, err
		}
	}
	return BlobInUse(p, name, named), nil
}

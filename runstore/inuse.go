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

// Named is the set of blob names that a ply's records name: its final
// blob rows once it is Final; before, its expansion and combine markers
// and committed merge outputs. Only what matters for p's state is read.
func Named(p *Ply, exps []Expansion, combines []Combine, runs []*Run, finals []FinalBlob) map[string]bool {
	named := map[string]bool{}
	if p.State.AtLeast(Final) {
		for _, f := range finals {
			named[f.Blob] = true
		}
		return named
	}
	for _, e := range exps {
		named[e.Blob] = true
	}
	for _, c := range combines {
		named[c.Blob] = true
	}
	for _, r := range runs {
		named[r.Blob] = true
	}
	return named
}

// blobNames reads what Named needs for p and applies it.
func (s *Store) blobNames(ctx context.Context, p *Ply) (map[string]bool, error) {
	if p.State.AtLeast(Final) {
		finals, err := s.Finals(ctx, p.Ply)
		if err != nil {
			return nil, err
		}
		return Named(p, nil, nil, nil, finals), nil
	}
	exps, err := s.Expansions(ctx, p.Ply)
	if err != nil {
		return nil, err
	}
	var combines []Combine
	if p.Groups > 0 {
		if combines, err = s.Combines(ctx, p.Ply); err != nil {
			return nil, err
		}
	}
	runs, err := s.Runs(ctx, p.Ply)
	if err != nil {
		return nil, err
	}
	return Named(p, exps, combines, runs, nil), nil
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

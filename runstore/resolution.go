package runstore

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// Resolution is the marker a resolve task adds once one final blob's
// results are stored; its presence says the blob is resolved.
type Resolution struct {
	Index int
	Counts
	// On ply 0, the start position's score when known (Scored): Score
	// is black minus white, empty squares to the winner; ScoreBlack and
	// ScoreWhite a perfect-play final count, when known, else zero.
	Scored                        bool
	Score, ScoreBlack, ScoreWhite int64
}

// AddResolution records that final blob r.Index of a ply is resolved.
// Adding it twice is harmless.
func (s *Store) AddResolution(ctx context.Context, ply int, r Resolution) error {
	e := storage.Entity{PartitionKey: s.resolutionMarkers(ply).pk(r.Index), RowKey: rkResolution(r.Index), Props: map[string]any{
		"Black": r.Black, "White": r.White, "Draws": r.Draws, "Unknown": r.Unknown,
		"ScoreBlack": r.ScoreBlack, "ScoreWhite": r.ScoreWhite, "Scored": r.Scored, "Score": r.Score,
	}}
	if _, err := addOnce(ctx, s.state, e); err != nil {
		return fmt.Errorf("recording the resolution of ply %d blob %d: %w", ply, r.Index, err)
	}
	return nil
}

// Resolved reports whether final blob index of a ply is resolved.
func (s *Store) Resolved(ctx context.Context, ply, index int) (bool, error) {
	return exists(ctx, s.state, s.resolutionMarkers(ply).pk(index), rkResolution(index))
}

// AllResolvedGiven reports whether all n final blobs of a ply are
// resolved, given that blob index is (see completion.go).
func (s *Store) AllResolvedGiven(ctx context.Context, ply, index, n int) (bool, error) {
	return s.itemDone(ctx, s.resolutionMarkers(ply), index, n)
}

// AllResolved reports whether all n final blobs of a ply are resolved,
// from the group markers alone.
func (s *Store) AllResolved(ctx context.Context, ply, n int) (bool, error) {
	return s.allDone(ctx, s.resolutionMarkers(ply), n)
}

// Resolutions reads every resolution marker of a ply.
func (s *Store) Resolutions(ctx context.Context, ply int) ([]Resolution, error) {
	m := s.resolutionMarkers(ply)
	from, to := m.allItems()
	es, err := s.items(ctx, m, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]Resolution, len(es))
	for i, e := range es {
		d := decode(e, nil)
		out[i] = Resolution{Index: d.keyIndex(string(m.item)), Counts: Counts{Black: d.int("Black"), White: d.int("White"), Draws: d.int("Draws"), Unknown: d.int("Unknown")},
			ScoreBlack: d.int("ScoreBlack"), ScoreWhite: d.int("ScoreWhite")}
		if d.optional("Scored") {
			out[i].Scored, out[i].Score = d.bool("Scored"), d.int("Score")
		}
		if err := d.done("resolution marker " + e.RowKey); err != nil {
			return nil, err
		}
	}
	return out, nil
}

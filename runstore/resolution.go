package runstore

import "fmt"

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

// ResolutionStage is the resolution of ply p: one item per final blob,
// each committing a Resolution. Adding one twice is harmless: its
// content depends only on the notices, complete before the stage starts.
func (s *Store) ResolutionStage(p *Ply) Stage[Resolution] { return newStage(s, p, &resolutionKind) }

var resolutionKind = stageKind[Resolution]{
	item:  "final blob",
	items: func(p *Ply) int { return p.Finals },
	from:  Final, to: Closed,
	early: func(p *Ply) string {
		return fmt.Sprintf("ply %d is %s, not final, so it cannot be resolved", p.Ply, p.State)
	},
	missing: func(p *Ply, i int) string { return fmt.Sprintf("ply %d has no final blob %d to resolve", p.Ply, i) },
	rows:    func(s *Store, ply int) stageMarkers { return s.resolutionMarkers(ply) },
	index:   func(r Resolution) int { return r.Index },
	encode: func(r Resolution) (map[string]any, error) {
		return map[string]any{"Black": r.Black, "White": r.White, "Draws": r.Draws, "Unknown": r.Unknown,
			"ScoreBlack": r.ScoreBlack, "ScoreWhite": r.ScoreWhite, "Scored": r.Scored, "Score": r.Score}, nil
	},
	decode: func(d *decoder, i int) Resolution {
		r := Resolution{Index: i, Counts: Counts{Black: d.int("Black"), White: d.int("White"), Draws: d.int("Draws"), Unknown: d.int("Unknown")},
			ScoreBlack: d.int("ScoreBlack"), ScoreWhite: d.int("ScoreWhite")}
		if d.optional("Scored") {
			r.Scored, r.Score = d.bool("Scored"), d.int("Score")
		}
		return r
	},
}

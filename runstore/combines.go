package runstore

import "fmt"

// Combine is the marker a combine task commits once its run is written:
// its presence says the task is done and where its edges are. Combine
// task i of a ply with a combine level merges group i/Ranges's segments
// of range i%Ranges (see Sizes.Levels).
//
// Invariant: Blob holds the group's edges of the range sorted, cut at
// the ply's splitters: the range's k-th bucket is Cuts.Segment(k) of
// Blob, so len(Cuts) is the range's bucket count plus one
// (or 0 when the group had no edges in the range and no blob was
// written).
type Combine struct {
	Index    int
	Attempt  string
	Blob     string
	Cuts     Cuts
	Segments int64 // expansion segments read
	Entries  int64 // entries written
}

// CombineStage is the combine level of ply p (none when p.Groups is 0):
// one item per combine task, each committing a Combine.
func (s *Store) CombineStage(p *Ply) Stage[Combine] { return newStage(s, p, &combineKind) }

var combineKind = stageKind[Combine]{
	item:  "combine task",
	items: func(p *Ply) int { return p.Groups * p.Ranges },
	from:  Merging, to: Merging,
	early: func(p *Ply) string {
		return fmt.Sprintf("ply %d is %s: its runs are combined only once it is merging", p.Ply, p.State)
	},
	missing: func(p *Ply, i int) string {
		return fmt.Sprintf("ply %d has %d combine tasks, not %d", p.Ply, p.Groups*p.Ranges, i+1)
	},
	rows:    func(s *Store, ply int) stageMarkers { return s.combineMarkers(ply) },
	index:   func(c Combine) int { return c.Index },
	attempt: func(c Combine) string { return c.Attempt },
	encode: func(c Combine) (map[string]any, error) {
		if err := checkBuckets(c.Cuts); err != nil {
			return nil, err
		}
		return map[string]any{"Attempt": c.Attempt, "Blob": c.Blob, "Cuts": encodeCuts(c.Cuts),
			"Segments": c.Segments, "Entries": c.Entries}, nil
	},
	decode: func(d *decoder, i int) Combine {
		return Combine{Index: i, Attempt: d.str("Attempt"), Blob: d.str("Blob"), Cuts: d.cuts("Cuts"),
			Segments: d.int("Segments"), Entries: d.int("Entries")}
	},
}

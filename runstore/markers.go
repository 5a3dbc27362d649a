package runstore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxBuckets bounds a ply's buckets, so that an expansion marker's cuts
// (at most 5 bytes per bucket) fit one binary property of 64 KiB.
const MaxBuckets = 8192

// Expansion is the marker an expansion task commits once its blob is
// written; its presence says the task is done and where its edges are.
//
// Invariant: Blob holds the task's edges sorted, cut at the ply's
// splitters: bucket b's edges are Cuts.Segment(b) of Blob, so
// len(Cuts) is the ply's bucket count plus one (or 0 when the task found
// no edges and wrote no blob).
type Expansion struct {
	Task     int
	Blob     string
	Cuts     Cuts
	Parents  int64 // positions expanded
	Terminal int64 // of which terminal
	Edges    int64 // moves found
	Entries  int64 // entries written (distinct children per parent)
}

// Cuts are where each bucket starts in a run of edges cut into buckets
// (an expansion or a combine task's blob), then where the last ends.
type Cuts []int64

// Segment is where bucket b of the cuts lies; n is 0 when it holds
// nothing or the cuts have no bucket b.
func (c Cuts) Segment(b int) (off, n int64) {
	if b < 0 || b+1 >= len(c) {
		return 0, 0
	}
	return c[b], c[b+1] - c[b]
}

func encodeCuts(cuts Cuts) []byte {
	out := make([]byte, 0, 2*len(cuts))
	var prev int64
	for _, c := range cuts {
		out = binary.AppendUvarint(out, uint64(c-prev))
		prev = c
	}
	return out
}

func decodeCuts(b []byte) (Cuts, error) {
	var out Cuts
	var at int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 || d > 1<<40 {
			return nil, errors.New("malformed cuts")
		}
		at += int64(d)
		out = append(out, at)
		b = b[n:]
	}
	return out, nil
}

// ExpansionStage is the expansion of ply p: one item per expansion task
// of the previous ply's final blobs, each committing an Expansion.
func (s *Store) ExpansionStage(p *Ply) Stage[Expansion] { return newStage(s, p, &expansionKind) }

var expansionKind = stageKind[Expansion]{
	item:  "expansion task",
	items: func(p *Ply) int { return p.Tasks },
	from:  Expanding, to: Expanding,
	early: func(p *Ply) string { return fmt.Sprintf("ply %d is %s: it is not expanding", p.Ply, p.State) },
	missing: func(p *Ply, i int) string {
		return fmt.Sprintf("ply %d has %d expansion tasks, not %d", p.Ply, p.Tasks, i+1)
	},
	rows:  func(s *Store, ply int) stageMarkers { return s.expansionMarkers(ply) },
	index: func(e Expansion) int { return e.Task },
	attempt: func(e Expansion) string {
		b, _ := ParseBlobName(e.Blob)
		return b.Attempt
	},
	encode: func(e Expansion) (map[string]any, error) {
		if err := checkBuckets(e.Cuts); err != nil {
			return nil, err
		}
		return map[string]any{"Blob": e.Blob, "Cuts": encodeCuts(e.Cuts),
			"Parents": e.Parents, "Terminal": e.Terminal, "Edges": e.Edges, "Entries": e.Entries}, nil
	},
	decode: func(d *decoder, i int) Expansion {
		return Expansion{Task: i, Blob: d.str("Blob"), Cuts: d.cuts("Cuts"),
			Parents: d.int("Parents"), Terminal: d.int("Terminal"), Edges: d.int("Edges"), Entries: d.int("Entries")}
	},
}

// checkBuckets refuses cuts into more buckets than a marker holds.
func checkBuckets(c Cuts) error {
	if len(c) > MaxBuckets+1 {
		return fmt.Errorf("%d buckets, at most %d", len(c)-1, MaxBuckets)
	}
	return nil
}

package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// CombineLevel is one level of a ply's combining (Sizes.Levels). The runs
// of the level below (the expansion runs, below the first level) form
// Groups groups of consecutive runs (SpanOf), the buckets form Ranges
// ranges of consecutive buckets, and the level's combine task g*Ranges+r
// merges group g's segments of range r into one run, cut at the range's
// buckets. The bucket merges read the runs of the last level, one a
// group.
type CombineLevel struct{ Groups, Ranges int }

// Tasks is how many combine tasks the level has.
func (l CombineLevel) Tasks() int { return l.Groups * l.Ranges }

// TasksOf lists the level's tasks of groups over ranges, group by group.
func (l CombineLevel) TasksOf(groups, ranges Span) []int {
	out := make([]int, 0, max(0, groups.Hi-groups.Lo)*max(0, ranges.Hi-ranges.Lo))
	for g := groups.Lo; g < groups.Hi; g++ {
		for r := ranges.Lo; r < ranges.Hi; r++ {
			out = append(out, g*l.Ranges+r)
		}
	}
	return out
}

// Combine is the marker a combine task commits once its run is written:
// its presence says the task is done and where its edges are. Combine
// task i of a level merges group i/Ranges's segments of range i%Ranges.
//
// Invariant: Blob holds the group's edges of the range sorted, cut at
// the ply's splitters: the range's k-th bucket is Cuts.Segment(k) of
// Blob, so len(Cuts) is the range's bucket count plus one
// (or 0 when the group had no edges in the range and no blob was
// written).
type Combine struct {
	Level    int // the level, from 0 (not stored: the marker's stage says it)
	Index    int // the task within its level
	Attempt  string
	Blob     string
	Cuts     Cuts
	Segments int64 // segments read
	Entries  int64 // entries written
}

// Combining reports whether p has combine levels.
func (p *Ply) Combining() bool { return len(p.Levels) > 0 }

// Top is p's last combine level, whose runs its bucket merges read.
func (p *Ply) Top() CombineLevel { return p.Levels[len(p.Levels)-1] }

// CombineTasks is how many combine tasks p has, every level's.
func (p *Ply) CombineTasks() int {
	n := 0
	for _, l := range p.Levels {
		n += l.Tasks()
	}
	return n
}

// CombineIndex is the ply-wide number of task j of level: its G
// message's index, and the number in its blob's name. Every level's
// tasks are numbered in turn, the first level's first, so a ply of one
// level numbers them as that level does.
func (p *Ply) CombineIndex(level, j int) int {
	for _, l := range p.Levels[:level] {
		j += l.Tasks()
	}
	return j
}

// CombineAt is the level and the task within it of ply-wide combine task
// i (CombineIndex's inverse); ok is false when p has no task i, and then
// a task past the last is numbered in the last level, past its tasks,
// for that level's stage to refuse.
func (p *Ply) CombineAt(i int) (level, j int, ok bool) {
	j = i
	for level, l := range p.Levels {
		if j < l.Tasks() || level == len(p.Levels)-1 {
			return level, j, j >= 0 && j < l.Tasks()
		}
		j -= l.Tasks()
	}
	return 0, i, false
}

// Children is the runs of the level below that group g of level reads:
// expansion tasks below the first level, else the groups of the level
// below (each with a run per range of that level).
func (p *Ply) Children(level, g int) Span {
	below := p.Tasks
	if level > 0 {
		below = p.Levels[level-1].Groups
	}
	return SpanOf(g, below, p.Levels[level].Groups)
}

// Overlapping is the ranges of level+1 that overlap range r of level:
// the tasks of a group above that read a run of range r.
func (p *Ply) Overlapping(level, r int) Span {
	from := SpanOf(r, p.Buckets, p.Levels[level].Ranges)
	up := p.Levels[level+1].Ranges
	return Span{PartOf(from.Lo, p.Buckets, up), PartOf(from.Hi-1, p.Buckets, up) + 1}
}

// Reads is the ranges of level-1 that range r of level (above the first)
// overlaps: the runs of each child group that its task reads.
func (p *Ply) Reads(level, r int) Span {
	span := SpanOf(r, p.Buckets, p.Levels[level].Ranges)
	below := p.Levels[level-1].Ranges
	return Span{PartOf(span.Lo, p.Buckets, below), PartOf(span.Hi-1, p.Buckets, below) + 1}
}

// encodeUpper writes the levels past the first as the ply record holds
// them, "groups x ranges" a level, comma-separated ("" for none).
func encodeUpper(levels []CombineLevel) string {
	if len(levels) < 2 {
		return ""
	}
	parts := make([]string, len(levels)-1)
	for k, l := range levels[1:] {
		parts[k] = fmt.Sprintf("%dx%d", l.Groups, l.Ranges)
	}
	return strings.Join(parts, ",")
}

// decodeLevels is the levels of a ply record: the first from its Groups
// and Ranges (none when they are 0), the others from upper.
func decodeLevels(groups, ranges int, upper string) ([]CombineLevel, error) {
	if groups == 0 {
		if upper != "" {
			return nil, fmt.Errorf("%w: combine levels %q above no first level", ErrMalformed, upper)
		}
		return nil, nil
	}
	levels := []CombineLevel{{groups, ranges}}
	if upper == "" {
		return levels, nil
	}
	for _, part := range strings.Split(upper, ",") {
		gs, rs, ok := strings.Cut(part, "x")
		g, gerr := strconv.Atoi(gs)
		r, rerr := strconv.Atoi(rs)
		if !ok || gerr != nil || rerr != nil || g < 1 || r < 1 {
			return nil, fmt.Errorf("%w: combine level %q", ErrMalformed, part)
		}
		levels = append(levels, CombineLevel{g, r})
	}
	if len(levels) > MaxCombineLevels {
		return nil, fmt.Errorf("%w: %d combine levels, more than %d", ErrMalformed, len(levels), MaxCombineLevels)
	}
	return levels, nil
}

// levelPrefixes are the row-key prefixes of each combine level's item
// and node markers: the first level's are those of the runs seeded
// before there were more.
var levelPrefixes = [...][2]byte{{'a', 'b'}, {'f', 'g'}, {'h', 'i'}, {'j', 'l'}, {'m', 'n'}, {'o', 'p'}, {'q', 'r'}}

// MaxCombineLevels is the most combine levels a ply has (Sizes.Levels).
const MaxCombineLevels = len(levelPrefixes)

func (s *Store) combineMarkers(ply, level int) stageMarkers {
	return s.stageMarkers(s.runRows(ply), levelPrefixes[level][0], levelPrefixes[level][1], combineTally)
}

// CombineStage is combine level level of ply p: one item per combine
// task of the level, each committing a Combine.
func (s *Store) CombineStage(p *Ply, level int) Stage[Combine] {
	return newStage(s, p, &combineKinds[level])
}

var combineKinds = func() (kinds [MaxCombineLevels]stageKind[Combine]) {
	for level := range kinds {
		kinds[level] = combineKind(level)
	}
	return kinds
}()

// combineKind is the stage kind of combine level level.
func combineKind(level int) stageKind[Combine] {
	tasks := func(p *Ply) int {
		if level < len(p.Levels) {
			return p.Levels[level].Tasks()
		}
		return 0
	}
	item := "combine task"
	if level > 0 {
		item = fmt.Sprintf("combine task of level %d", level+1)
	}
	return stageKind[Combine]{
		item:  item,
		items: tasks,
		from:  Merging, to: Merging,
		early: func(p *Ply) string {
			return fmt.Sprintf("ply %d is %s: its runs are combined only once it is merging", p.Ply, p.State)
		},
		missing: func(p *Ply, i int) string {
			return fmt.Sprintf("ply %d has %d %ss, not %d", p.Ply, tasks(p), item, i+1)
		},
		rows:    func(s *Store, ply int) stageMarkers { return s.combineMarkers(ply, level) },
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
			return Combine{Level: level, Index: i, Attempt: d.str("Attempt"), Blob: d.str("Blob"), Cuts: d.cuts("Cuts"),
				Segments: d.int("Segments"), Entries: d.int("Entries")}
		},
	}
}

package runstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Tallies: what a stage's items add up to, carried up its completion
// tree (completion.go), so that whoever needs a stage's totals (the
// ply's figures when it becomes Final or Resolved, the next ply's
// splitters, where a final blob lies among the buckets) reads one node
// a level, not every item's marker.
//
// A tally names int64 properties of the item markers; the marker of a
// tree node, added once every child of it is read present, carries the
// sum of each over its children, under the same name. So a node's sums
// are its items' sums, and the root's are the stage's. Markers never
// change once added, so whoever adds a node (or a redelivery that finds
// it) computes the same sums. A tally may also carry samples: a binary
// property of concatenated position keys, of which a node keeps at most
// maxSamples, taken from each child in proportion to its weight (a summed
// property) and evenly spaced within it.
//
// A node whose children lack a property (markers written by a release
// before tallies, on a run resumed across the upgrade) carries no sums
// at all, and neither does any node above it: the readers then count
// from the item markers themselves, as they did before (summed). So do
// the runs of flat completion, which have no tree.
type tally struct {
	sums    []string
	samples string // the samples' property, if any
	weight  string // the summed property that weighs a child's samples
	// each, if set, is a summed property that a node also keeps child by
	// child, in order, under each+"Each" (uvarints): so that a reader can
	// go down the tree to the item that holds the k-th unit of it with
	// one point read a level (bucketOf), not a query of every sibling.
	each string
}

// maxSamples is how many sample keys a marker carries at most: one
// binary property of at most storage.MaxPropertyBytes. The splitters
// are chosen from the samples of the markers of a level below the root,
// up to maxRootSamples of them (MergedTotals).
const maxSamples = storage.MaxPropertyBytes / board.KeyLen

// maxRootSamples is how many sample keys the splitters are chosen from at
// most: 64 markers' worth, about 2^18.
const maxRootSamples = 64 * maxSamples

// The tallies of the stages whose totals are read.
var (
	expansionTally  = &tally{sums: []string{"Edges"}}
	combineTally    = &tally{sums: []string{"Segments"}}
	mergeTally      = &tally{sums: []string{"Outputs", "Positions", "Terminal", "Segments", "Entries"}, samples: "Samples", weight: "Positions", each: "Outputs"}
	resolutionTally = &tally{sums: []string{"Black", "White", "Draws", "Unknown"}}
)

// node is the properties the marker of a node over children carries:
// nil when t is nil or a child lacks a property.
func (t *tally) node(children []storage.Entity) map[string]any {
	if t == nil {
		return nil
	}
	props := make(map[string]any, len(t.sums)+1)
	var err error
	for _, name := range t.sums {
		var sum int64
		for _, c := range children {
			v, err := storage.PropInt64(c, name)
			if err != nil {
				// A marker of before tallies.
				return nil
			}
			sum += v
		}
		props[name] = sum
	}
	if t.each != "" {
		var each []byte
		for _, c := range children {
			v, _ := storage.PropInt64(c, t.each) // summed above
			each = binary.AppendUvarint(each, uint64(v))
		}
		props[t.each+"Each"] = each
	}
	if t.samples != "" {
		parts := make([]weighed, len(children))
		for i, c := range children {
			parts[i].weight, _ = storage.PropInt64(c, t.weight) // summed above
			if _, ok := c.Props[t.samples]; ok {
				if parts[i].keys, err = storage.PropBytes(c, t.samples); err != nil {
					return nil
				}
			}
		}
		if keys := sampleKeys(parts, maxSamples); len(keys) > 0 {
			props[t.samples] = keys // Azure keeps no empty binary
		}
	}
	return props
}

// eachOf reads node marker e's t.each property child by child: ok is
// false when e does not keep it (a node added before it was kept) or
// keeps other than n children.
func (t *tally) eachOf(e storage.Entity, n int) (counts []int, ok bool) {
	raw, err := storage.PropBytes(e, t.each+"Each")
	if t.each == "" || err != nil {
		return nil, false
	}
	counts = make([]int, 0, n)
	for len(raw) > 0 {
		v, k := binary.Uvarint(raw)
		if k <= 0 {
			return nil, false
		}
		counts, raw = append(counts, int(v)), raw[k:]
	}
	return counts, len(counts) == n
}

// weighed is sample keys that stand for weight positions.
type weighed struct {
	keys   []byte
	weight int64
}

// sampleKeys keeps at most limit of the parts' keys: each part's share
// of them is its share of the weight, its keys evenly spaced; all of
// them when they fit.
func sampleKeys(parts []weighed, limit int64) []byte {
	var total, keys int64
	for _, p := range parts {
		total += p.weight
		keys += int64(len(p.keys) / board.KeyLen)
	}
	var out []byte
	for _, p := range parts {
		have := int64(len(p.keys) / board.KeyLen)
		take := have
		switch {
		case keys <= limit:
		case total > 0:
			take = min(have, limit*p.weight/total)
		default:
			take = 0
		}
		for k := range take {
			at := k * have / take * board.KeyLen
			out = append(out, p.keys[at:at+board.KeyLen]...)
		}
	}
	return out
}

// root reads the root marker of a complete stage of n items: ok is false
// when the stage is not complete, is counted flat, or its root carries
// no tally. A stage of no items is complete with a root of no
// properties.
func (s *Store) root(ctx context.Context, m stageMarkers, n int) (e storage.Entity, ok bool, err error) {
	if m.flat {
		return e, false, nil
	}
	if n == 0 {
		return storage.Entity{Props: map[string]any{}}, true, nil
	}
	e, err = s.state(m.pk(0)).Get(ctx, m.pk(0), m.nodeKey(m.rootLevel(n), 0))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return e, false, nil
	case err != nil:
		return e, false, fmt.Errorf("reading the root of %s: %w", m.base, err)
	}
	return e, m.tally.carried(e), nil
}

// carried reports whether node marker e carries t's properties.
func (t *tally) carried(e storage.Entity) bool {
	if t == nil {
		return false
	}
	for _, name := range t.sums {
		if _, err := storage.PropInt64(e, name); err != nil {
			return false
		}
	}
	return true
}

// MergedTotals reads the figures of a Merging ply whose buckets are all
// merged, for the transition to Final, and the sample keys (concatenated)
// from which the next ply's splitters are chosen: from the roots of its
// expansion, combine and merge stages, and the samples from the merge
// root's children or a level below (rootSamples: at most samplingNodes
// markers, at most maxRootSamples samples). A ply that lacks a
// root's tally (see tally) is counted from every marker and merged blob
// instead, with every sample.
func (s *Store) MergedTotals(ctx context.Context, p *Ply) (Totals, []byte, error) {
	t := Totals{Merges: int64(p.Buckets), Combines: int64(p.CombineTasks())}
	exp, ok, err := s.root(ctx, s.expansionMarkers(p.Ply), p.Tasks)
	if err != nil || !ok {
		return s.countedTotals(ctx, p, err)
	}
	for level, l := range p.Levels {
		comb, ok, err := s.root(ctx, s.combineMarkers(p.Ply, level), l.Tasks())
		if err != nil || !ok {
			return s.countedTotals(ctx, p, err)
		}
		c := decode(comb, nil)
		t.BlobReads += sumOf(c, "Segments")
		if err := c.done("the root of combine level " + strconv.Itoa(level+1)); err != nil {
			return Totals{}, nil, err
		}
	}
	merge, ok, err := s.root(ctx, s.bucketMarkers(p.Ply), p.Buckets)
	if err != nil || !ok {
		return s.countedTotals(ctx, p, err)
	}
	d := decode(exp, nil)
	t.Edges = sumOf(d, "Edges")
	d = decode(merge, nil)
	t.Finals = int(sumOf(d, "Outputs"))
	t.Positions, t.Terminal = sumOf(d, "Positions"), sumOf(d, "Terminal")
	t.BlobReads += sumOf(d, "Segments")
	t.Merged = sumOf(d, "Entries")
	if err := d.done("the merge stage's root"); err != nil {
		return Totals{}, nil, err
	}
	samples, err := s.rootSamples(ctx, s.bucketMarkers(p.Ply), p.Buckets)
	return t, samples, err
}

// samplingNodes is the most markers rootSamples reads: two queries.
const samplingNodes = 128

// rootSamples reads the samples of the children of a complete stage's
// root, weighed by their positions; or, when the level below them has at
// most samplingNodes markers, theirs, and so on down. Each marker keeps
// at most maxSamples keys, so the root's children alone would give a
// stage of 74 items in a tree of 64 (two nodes) 7,710 samples where its
// items hold 74 times as many.
func (s *Store) rootSamples(ctx context.Context, m stageMarkers, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	level := m.rootLevel(n) - 1
	for level > 0 && m.nodes(n, level-1) <= samplingNodes {
		level--
	}
	count := m.nodes(n, level)
	es, err := queryPartitions(ctx, s.state, m.pksIn(Span{0, count}), m.nodeKey(level, 0), m.nodeKey(level, count))
	if err != nil {
		return nil, fmt.Errorf("reading the samples of %s: %w", m.base, err)
	}
	parts := make([]weighed, len(es))
	for i, e := range es {
		d := decode(e, nil)
		parts[i] = weighed{keys: d.optBytes(m.tally.samples), weight: d.int(m.tally.weight)}
		if err := d.done("a marker below the root of " + m.base); err != nil {
			return nil, err
		}
	}
	return sampleKeys(parts, maxRootSamples), nil
}

// sumOf is a root's sum name: zero in the root of a stage of no items.
func sumOf(d *decoder, name string) int64 {
	if !d.optional(name) {
		return 0
	}
	return d.int(name)
}

// countedTotals is MergedTotals from every marker and merged blob, when
// err is nil.
func (s *Store) countedTotals(ctx context.Context, p *Ply, err error) (Totals, []byte, error) {
	if err != nil {
		return Totals{}, nil, err
	}
	t := Totals{}
	merged, err := s.MergedBlobs(ctx, p)
	if err != nil {
		return t, nil, err
	}
	var samples []byte
	for _, m := range merged {
		t.Finals++
		t.Positions += m.Count
		t.Terminal += m.Terminal
		samples = append(samples, m.Samples...)
	}
	exps, err := s.ExpansionStage(p).Markers(ctx)
	if err != nil {
		return t, nil, err
	}
	for _, e := range exps {
		t.Edges += e.Edges
	}
	merges, err := s.MergeStage(p).Markers(ctx)
	if err != nil {
		return t, nil, err
	}
	for _, m := range merges {
		t.Merges++
		t.BlobReads += m.Segments
		t.Merged += m.Entries
	}
	combines, err := s.combines(ctx, p)
	if err != nil {
		return t, nil, err
	}
	for _, c := range combines {
		t.Combines++
		t.BlobReads += c.Segments
	}
	return t, samples, nil
}

// ResolvedCounts reads the summed results of a ply whose final blobs are
// all resolved: from the resolution stage's root, or, lacking its tally,
// from every marker.
func (s *Store) ResolvedCounts(ctx context.Context, p *Ply) (Counts, error) {
	var c Counts
	root, ok, err := s.root(ctx, s.resolutionMarkers(p.Ply), p.Finals)
	switch {
	case err != nil:
		return c, err
	case ok:
		d := decode(root, nil)
		c = Counts{Black: sumOf(d, "Black"), White: sumOf(d, "White"), Draws: sumOf(d, "Draws"), Unknown: sumOf(d, "Unknown")}
		return c, d.done("the resolution stage's root")
	}
	rs, err := s.ResolutionStage(p).Markers(ctx)
	if err != nil {
		return c, err
	}
	for _, r := range rs {
		c.Black += r.Black
		c.White += r.White
		c.Draws += r.Draws
		c.Unknown += r.Unknown
	}
	return c, nil
}

package runstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// FinalBlob is one final blob of a complete ply: the index-th in key
// order. Its positions are distinct, sorted, and disjoint from every other
// final blob's. C and R messages name final blobs by index.
type FinalBlob struct {
	Index    int
	Blob     string
	Count    int64 // positions
	Terminal int64
	Min, Max board.Position
}

func (f FinalBlob) entity(pk string) storage.Entity {
	return storage.Entity{PartitionKey: pk, RowKey: rkFinal(f.Index), Props: map[string]any{
		"Blob": f.Blob, "Count": f.Count, "Terminal": f.Terminal,
		"Min": f.Min.AppendKey(nil), "Max": f.Max.AppendKey(nil),
	}}
}

func (s *Store) decodeFinal(e storage.Entity) (FinalBlob, error) {
	d := decode(e, s.board)
	f := FinalBlob{Index: d.keyIndex(""), Blob: d.str("Blob"), Count: d.int("Count"), Terminal: d.int("Terminal"),
		Min: d.position("Min"), Max: d.position("Max")}
	return f, d.done("final blob " + e.RowKey)
}

// PutFinals records final blobs of a Final ply: each dispatch leaf its
// own (FinalsFor), before it enqueues the work that reads them. The
// rows are upserts whose content depends only on the ply's committed
// merges, so concurrent or repeated calls write the same rows.
func (s *Store) PutFinals(ctx context.Context, ply int, finals []FinalBlob) error {
	rows := s.finalRows(ply)
	ops := map[string][]storage.Op{}
	for _, f := range finals {
		pk := rows.pk(f.Index)
		ops[pk] = append(ops[pk], storage.Op{Kind: storage.OpUpsert, Entity: f.entity(pk)})
	}
	for pk, ops := range ops {
		if err := transactAll(ctx, s.state, pk, ops); err != nil {
			return fmt.Errorf("recording the final blobs of ply %d: %w", ply, err)
		}
	}
	return nil
}

// Final reads final blob index of a ply; storage.ErrNotFound if the ply
// has no such blob.
func (s *Store) Final(ctx context.Context, ply, index int) (FinalBlob, error) {
	pk := s.finalRows(ply).pk(index)
	e, err := s.state(pk).Get(ctx, pk, rkFinal(index))
	if err != nil {
		return FinalBlob{}, fmt.Errorf("reading final blob %d of ply %d: %w", index, ply, err)
	}
	return s.decodeFinal(e)
}

// FinalsIn reads the rows of the final blobs of a ply in span, in index
// order: one query for each partition that holds some (one for a span
// of spreadGroup aligned as a back leaf's is).
func (s *Store) FinalsIn(ctx context.Context, ply int, span Span) ([]FinalBlob, error) {
	es, err := queryPartitions(ctx, s.state, s.finalRows(ply).pksIn(span), rkFinal(span.Lo), rkFinal(span.Hi))
	if err != nil {
		return nil, fmt.Errorf("reading final blobs %d to %d of ply %d: %w", span.Lo, span.Hi, ply, err)
	}
	out, err := s.decodeFinals(ply, span.Lo, es)
	if err != nil {
		return nil, err
	}
	if len(out) != span.Hi-span.Lo {
		return nil, fmt.Errorf("%w: ply %d has %d of final blobs %d to %d", ErrMalformed, ply, len(out), span.Lo, span.Hi)
	}
	return out, nil
}

// Finals reads every final blob of a ply, in index order.
func (s *Store) Finals(ctx context.Context, ply int) ([]FinalBlob, error) {
	es, err := queryPartitions(ctx, s.state, s.finalRows(ply).pks(), "", "")
	if err != nil {
		return nil, fmt.Errorf("listing the final blobs of ply %d: %w", ply, err)
	}
	return s.decodeFinals(ply, 0, es)
}

// decodeFinals decodes the rows of consecutive final blobs of ply from
// index first, and refuses rows that skip one.
func (s *Store) decodeFinals(ply, first int, es []storage.Entity) ([]FinalBlob, error) {
	out := make([]FinalBlob, len(es))
	for i, e := range es {
		var err error
		if out[i], err = s.decodeFinal(e); err != nil {
			return nil, err
		}
		if out[i].Index != first+i {
			return nil, fmt.Errorf("%w: ply %d final blob rows skip index %d", ErrMalformed, ply, first+i)
		}
	}
	return out, nil
}

// FinalsFor makes the rows of a Final ply's final blobs in span from its
// merged blobs: final blob i is the i-th committed merge output in key
// order, bucket after bucket. It finds the bucket where span starts by
// going down the merge stage's completion tree, counting the outputs of
// the nodes before it (tally.go): one query of at most a fan-out of
// markers a level. A run without the tally counts the outputs of every
// bucket marker instead. Then it reads the merged blobs of the buckets
// from there on, a doubling run of buckets at a time, until it has span.
func (s *Store) FinalsFor(ctx context.Context, p *Ply, span Span) ([]FinalBlob, error) {
	if span.Lo >= span.Hi {
		return nil, nil
	}
	if span.Hi > p.Finals {
		return nil, fmt.Errorf("%w: ply %d has %d final blobs, not %d", ErrMalformed, p.Ply, p.Finals, span.Hi)
	}
	bucket, first, outs, err := s.bucketOf(ctx, p, span.Lo)
	if err != nil {
		return nil, fmt.Errorf("finding final blob %d of ply %d: %w", span.Lo, p.Ply, err)
	}
	// The first read covers the buckets that hold the span, as far as
	// bucketOf saw their outputs (to the end of their group); past those,
	// one bucket, then twice as many each time.
	holding, n := 0, first
	for _, o := range outs {
		if n >= span.Hi {
			break
		}
		n += o
		holding++
	}
	var merged []*MergedBlob
	for at, step, next := bucket, max(1, holding), 1; first+len(merged) < span.Hi; at, step, next = at+step, next, 2*next {
		if at >= p.Buckets {
			return nil, fmt.Errorf("%w: ply %d's buckets hold %d merged blobs, not %d", ErrMalformed, p.Ply, first+len(merged), span.Hi)
		}
		more, err := s.MergedBlobsIn(ctx, p.Ply, Span{Lo: at, Hi: min(p.Buckets, at+step)})
		if err != nil {
			return nil, err
		}
		merged = append(merged, more...)
	}
	// Stable: a bucket's outputs are read in the order they were written.
	slices.SortStableFunc(merged, func(a, b *MergedBlob) int { return board.Compare(a.Min, b.Min) })
	out := make([]FinalBlob, 0, span.Hi-span.Lo)
	for i := span.Lo; i < span.Hi; i++ {
		m := merged[i-first]
		out = append(out, FinalBlob{Index: i, Blob: m.Blob, Count: m.Count, Terminal: m.Terminal, Min: m.Min, Max: m.Max})
	}
	return out, nil
}

// bucketOf finds the bucket that holds final blob i of p, and the index
// of that bucket's first final blob; outs are the outputs of that bucket
// and the next ones of its group in the tree, as far as it read
// them (none from a flat count).
func (s *Store) bucketOf(ctx context.Context, p *Ply, i int) (bucket, first int, outs []int, err error) {
	m, n := s.bucketMarkers(p.Ply), p.Buckets
	e, ok, err := s.root(ctx, m, n)
	if err != nil {
		return 0, 0, nil, err
	}
	if !ok {
		bucket, first, err = s.countedBucketOf(ctx, p, i)
		return bucket, first, nil, err
	}
	// Invariant: node j of level, whose marker is e, holds final blob i,
	// and first is the index of its first final blob. A node keeps its
	// children's outputs (OutputsEach), so going down costs one point
	// read a level; a node added before it kept them has its children
	// read instead, at most a fan-out of them.
	level, j := m.rootLevel(n), 0
	for level > 0 {
		lo, hi := j*m.fan, min(m.nodes(n, level-1), (j+1)*m.fan)
		counts, kept := m.tally.eachOf(e, hi-lo)
		var es []storage.Entity
		if !kept {
			es, err = queryAll(ctx, s.state, m.pk(lo), m.nodeKey(level-1, lo), m.nodeKey(level-1, hi))
			if err != nil {
				return 0, 0, nil, err
			}
			if len(es) != hi-lo {
				return 0, 0, nil, fmt.Errorf("%w: %d of the %d markers below a complete node", ErrMalformed, len(es), hi-lo)
			}
			counts = make([]int, len(es))
			for k, c := range es {
				o, err := storage.PropInt64(c, "Outputs")
				if err != nil {
					return 0, 0, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
				}
				counts[k] = int(o)
			}
		}
		k := -1
		for at, o := range counts {
			if i < first+o {
				k = at
				break
			}
			first += o
		}
		if k < 0 {
			return 0, 0, nil, fmt.Errorf("%w: the buckets hold %d final blobs, not %d", ErrMalformed, first, i+1)
		}
		j, outs, level = lo+k, counts[k:], level-1
		switch {
		case level == 0:
		case es != nil:
			e = es[k]
		default:
			if e, err = s.state(m.pk(j)).Get(ctx, m.pk(j), m.nodeKey(level, j)); err != nil {
				return 0, 0, nil, fmt.Errorf("reading node %d of level %d of %s: %w", j, level, m.base, err)
			}
		}
	}
	return j, first, outs, nil
}

// countedBucketOf is bucketOf from every bucket marker.
func (s *Store) countedBucketOf(ctx context.Context, p *Ply, i int) (bucket, first int, err error) {
	merges, err := s.MergeStage(p).Markers(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range merges {
		if i < first+int(m.Outputs) {
			return m.Bucket, first, nil
		}
		first += int(m.Outputs)
	}
	return 0, 0, fmt.Errorf("%w: the buckets hold %d final blobs, not %d", ErrMalformed, first, i+1)
}

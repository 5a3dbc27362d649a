package runstore

import (
	"context"
	"fmt"

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

// PutFinals records a ply's final blobs before the ply becomes Final.
// The rows are upserts whose content depends only on the ply's frozen
// runs, so concurrent or repeated calls write the same rows.
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

// Finals reads every final blob of a ply, in index order.
func (s *Store) Finals(ctx context.Context, ply int) ([]FinalBlob, error) {
	es, err := queryPartitions(ctx, s.state, s.finalRows(ply).pks(), "", "")
	if err != nil {
		return nil, fmt.Errorf("listing the final blobs of ply %d: %w", ply, err)
	}
	out := make([]FinalBlob, len(es))
	for i, e := range es {
		if out[i], err = s.decodeFinal(e); err != nil {
			return nil, err
		}
		if out[i].Index != i {
			return nil, fmt.Errorf("%w: ply %d final blob rows skip index %d", ErrMalformed, ply, i)
		}
	}
	return out, nil
}

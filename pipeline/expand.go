package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/storage"
)

// expand handles A and C messages: it expands one final blob of ply n (or
// the whole inline ply) into a sorted run of edges for ply n+1, cut into
// one segment per bucket of the next ply's splitters, and registers each
// segment as a range record.
//
// Crash points and redelivery:
//   - before anything is written: the redelivery starts over;
//   - after the compensation message: it surfaces later and deletes the
//     blob unless a record refers to it;
//   - after the blob: the blob's name is unique to this attempt
//     (attemptTag), so a retry writes its own and the compensation
//     message deletes ours, even while the retry runs: were the names
//     shared, the stale message could delete the retry's blob between
//     its upload and its commit;
//   - between record batches: each batch holds its own marker row, so a
//     batch a previous attempt committed fails as a whole with ErrExists
//     and is skipped; segments can never be added twice, even after a
//     merge consumed them; an attempt that committed no batch leaves its
//     compensation message to decide about the blob it rewrote;
//   - after the done marker (in the last batch): the redelivery sees it,
//     skips the work and only repeats the idempotent follow-up (the scan).
func (t *task) expand(ctx context.Context, m Message) error {
	r := t.run
	ply, err := r.getPly(ctx, m.Ply)
	if err != nil {
		return err
	}
	if ply.State != plyComplete {
		return badf("ply %d is not complete, so it cannot be expanded", m.Ply)
	}
	j := m.Index
	switch m.Kind {
	case KindChunk:
		if j >= len(ply.Blobs) || ply.Blobs[j] != m.Blob {
			return badf("ply %d has no final blob %d named %s", m.Ply, j, m.Blob)
		}
	case KindInline:
		if len(ply.Blobs) != 1 || int64(len(m.Positions)) != ply.Counts[0] {
			return badf("inline ply %d holds %d positions, but the ply has %d", m.Ply, len(m.Positions), ply.Positions)
		}
	}
	if m.Ply >= r.Config.Target {
		return badf("ply %d is the target ply and is not expanded", m.Ply)
	}
	child := m.Ply + 1
	next, err := r.getPly(ctx, child)
	if err != nil {
		return err
	}
	if next.State != plyOpen {
		return nil // the next ply is complete: this is a stale duplicate
	}
	if _, err := r.state.Get(ctx, pkRecords(child), doneMarker(j)); err == nil {
		return t.afterExpand(ctx, child, next.Tasks)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("reading expansion marker: %w", err)
	}

	positions := m.Positions
	if m.Kind == KindChunk {
		if positions, err = r.readKeys(ctx, m.Blob); err != nil {
			return err
		}
	}
	entries, stats := expandPositions(r.Board, positions, uint32(j))
	dedup.SortEntries(entries)
	t.progress.Add(int64(len(positions)), stats.edges)

	name := blobFor(child, fmt.Sprintf("e-%06d-%s", j, t.attemptTag()))
	data := make([]byte, 0, len(entries)*dedup.EntryLen)
	for _, e := range entries {
		data = dedup.AppendEntry(data, e)
	}
	var recs []*rangeRecord
	now := time.Now().UnixNano()
	for lo := 0; lo < len(entries); {
		// The entries are sorted, so the bucket ends at the first entry
		// not below its upper splitter: one comparison per entry.
		bucket := bucketOf(next.Splitters, entries[lo].Pos)
		hi := lo + 1
		if bucket == len(next.Splitters) {
			hi = len(entries)
		}
		for hi < len(entries) && board.Compare(entries[hi].Pos, next.Splitters[bucket]) < 0 {
			hi++
		}
		recs = append(recs, &rangeRecord{
			ID: segmentID(bucket, j), Blob: name,
			Off: int64(lo * dedup.EntryLen), Len: int64((hi - lo) * dedup.EntryLen), Count: int64(hi - lo),
			Min: entries[lo].Pos, Max: entries[hi-1].Pos, Created: now,
		})
		lo = hi
	}

	comp, err := t.compensate(ctx, child, name)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		if err := r.blobs.Upload(ctx, name, bytes.NewReader(data)); err != nil {
			return fmt.Errorf("writing expansion blob %s: %w", name, err)
		}
	}
	if err := comp.check(); err != nil {
		return err
	}
	const perBatch = storage.MaxBatchOps - 2
	committed := false
	for b := 0; b == 0 || b*perBatch < len(recs); b++ {
		batch := recs[b*perBatch : min(len(recs), (b+1)*perBatch)]
		ops := []storage.Op{{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pkRecords(child), RowKey: batchMarker(j, b), Props: map[string]any{}}}}
		for _, rr := range batch {
			ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: rr.entity(child)})
		}
		if (b+1)*perBatch >= len(recs) {
			ops = append(ops, storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: pkRecords(child), RowKey: doneMarker(j), Props: map[string]any{
				"Parents": int64(len(positions)), "Terminal": stats.terminal, "Edges": stats.edges, "Entries": int64(len(entries)),
			}}})
		}
		if _, err := r.state.Transact(ctx, pkRecords(child), ops); err != nil {
			var te *storage.TxError
			if errors.As(err, &te) && errors.Is(err, storage.ErrExists) {
				continue // an earlier attempt committed this batch
			}
			return fmt.Errorf("registering expansion runs of ply %d: %w", child, err)
		}
		committed = true
	}
	// If another attempt registered every batch, no record names this
	// blob (it carries our attempt's tag): keep the compensation message,
	// which deletes the blob unless a record names it.
	if committed {
		comp.done(ctx)
	}
	return t.afterExpand(ctx, child, next.Tasks)
}

// afterExpand starts the merges once every expansion task of the ply is
// done. Several tasks may see that at once; the scan marker lets one of
// them start the scan (duplicate scans would be harmless, but slow).
func (t *task) afterExpand(ctx context.Context, child, tasks int) error {
	es, err := queryAll(ctx, t.run.state, pkRecords(child), "d", "e")
	if err != nil {
		return err
	}
	if len(es) < tasks {
		return nil
	}
	// Tasks that finish together would each start a scan, and each scan
	// tries to claim every bucket's runs: on a large ply two of them keep
	// both workers busy claiming the same runs while no merge runs. The
	// first task to add the scan marker starts it; its redelivery starts
	// it again (a crash may have come before the enqueue), and a lost scan
	// is recovered by the idle nudge like any other lost message.
	mine := claimID(t.msg.ID, 0)
	_, err = t.run.state.Add(ctx, storage.Entity{PartitionKey: pkRecords(child), RowKey: rkScan, Props: map[string]any{"Owner": mine}})
	if errors.Is(err, storage.ErrExists) {
		e, gerr := t.run.state.Get(ctx, pkRecords(child), rkScan)
		if gerr != nil {
			return fmt.Errorf("reading the scan marker of ply %d: %w", child, gerr)
		}
		if propStr(e, "Owner") != mine {
			return nil // another task started the scan
		}
	} else if err != nil {
		return fmt.Errorf("adding the scan marker of ply %d: %w", child, err)
	}
	return t.run.enqueue(ctx, Message{Kind: KindScan, Ply: child})
}

type expandStats struct {
	terminal, edges int64
}

// expandPositions lists the edges from each non-terminal position to its
// distinct canonical children, naming the parent by (blob, index).
func expandPositions(b *board.Board, positions []board.Position, blob uint32) ([]dedup.Entry, expandStats) {
	var st expandStats
	entries := make([]dedup.Entry, 0, len(positions)*10)
	kids := make([]board.Position, 0, 32)
	for i, p := range positions {
		var moves int
		kids, moves = b.Children(p, kids[:0])
		if moves == 0 {
			st.terminal++
			continue
		}
		st.edges += int64(moves)
		for _, k := range kids {
			entries = append(entries, dedup.Entry{Pos: k, Ref: dedup.Ref{Blob: blob, Index: uint32(i)}})
		}
	}
	return entries, st
}

// bucketOf finds the bucket of a position: the number of splitters not
// greater than it.
func bucketOf(splitters []board.Position, p board.Position) int {
	lo, hi := 0, len(splitters)
	for lo < hi {
		mid := (lo + hi) / 2
		if board.Compare(splitters[mid], p) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

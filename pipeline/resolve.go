package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

func resolveMarker(j int) string { return fmt.Sprintf("d%06d", j) }

// resolve handles an R message: it decides the results of one final blob
// of a ply from the notices its children sent, stores them, and sends
// notices for the known results to the parents named in the blob's
// backtracking rows. Results flow back one ply at a time, from the target
// ply to the start.
//
// Crash points: the results blob and the notice rows have names derived
// from the blob, and their content depends only on the notices, which are
// complete before any task of this ply starts; so a retry rewrites the
// same data. The done marker, added last, makes a redelivery skip straight
// to the follow-up (completing the ply's resolution when it is the last).
func (t *task) resolve(ctx context.Context, m Message) error {
	r := t.run
	ply, err := r.getPly(ctx, m.Ply)
	if err != nil {
		return err
	}
	if ply.State != plyComplete || m.Index >= len(ply.Blobs) {
		return badf("ply %d has no final blob %d to resolve", m.Ply, m.Index)
	}
	if m.Ply < r.Config.Target {
		// R messages of a ply are sent only once the next ply is
		// resolved; an early one would decide from missing notices.
		child, err := r.getPly(ctx, m.Ply+1)
		if err != nil {
			return err
		}
		if !child.Resolved {
			return badf("ply %d is not resolved yet, so ply %d cannot be resolved", m.Ply+1, m.Ply)
		}
	}
	if _, err := r.state.Get(ctx, pkResolve(m.Ply), resolveMarker(m.Index)); err == nil {
		return t.afterResolve(ctx, m.Ply)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("reading resolve marker: %w", err)
	}
	blob := ply.Blobs[m.Index]
	keys, err := r.readKeys(ctx, blob)
	if err != nil {
		return err
	}
	tallies := make([]backtrack.Tally, len(keys))
	if m.Ply < r.Config.Target {
		es, err := queryAll(ctx, r.back, noticePartition(m.Ply, m.Index), "", "")
		if err != nil {
			return err
		}
		for _, e := range es {
			payload, err := backtrack.JoinRow(e.Props)
			if err != nil {
				return err
			}
			err = backtrack.DecodeNotices(payload, func(n backtrack.Notice) {
				if int(n.Index) < len(tallies) {
					tallies[n.Index].Add(keys[n.Index].Side, n)
				}
			})
			if err != nil {
				return fmt.Errorf("notices for ply %d blob %d: %w", m.Ply, m.Index, err)
			}
		}
	}
	results := make([]byte, 0, backtrack.ResultLen*len(keys))
	var counts [4]int64
	kids := make([]board.Position, 0, 32)
	for i, p := range keys {
		var res board.Result
		var score backtrack.Score
		switch {
		case r.Board.Terminal(p):
			res, score = r.Board.Result(p), backtrack.TerminalScore(p)
		case m.Ply >= r.Config.Target:
			res = board.Unknown
		case tallies[i].Known == 0:
			// No child reported a result, so nothing is decided whatever
			// the moves are (a non-terminal position has at least one):
			// this spares listing the children of most positions.
			res = board.Unknown
		default:
			kids, _ = r.Board.Children(p, kids[:0])
			res = backtrack.Decide(p.Side, len(kids), tallies[i])
			score = tallies[i].Score(len(kids))
		}
		results = backtrack.AppendResult(results, res, score)
		counts[res]++
	}
	if err := r.blobs.Put(ctx, resultBlob(m.Ply, m.Index), results); err != nil {
		return fmt.Errorf("writing results of ply %d blob %d: %w", m.Ply, m.Index, err)
	}
	if m.Ply > 0 {
		if err := r.sendNotices(ctx, m.Ply, m.Index, blob, results); err != nil {
			return err
		}
	}
	marker := map[string]any{
		"Black": counts[board.BlackWins], "White": counts[board.WhiteWins], "Draws": counts[board.Draw], "Unknown": counts[board.Unknown],
	}
	if m.Ply == 0 {
		// Ply 0 holds only the start position: its score is the run's.
		if _, s := backtrack.DecodeResult(results, 0); s.Known() {
			marker["ScoreBlack"], marker["ScoreWhite"] = int64(s.Black), int64(s.White)
		}
	}
	_, err = r.state.Add(ctx, storage.Entity{PartitionKey: pkResolve(m.Ply), RowKey: resolveMarker(m.Index), Props: marker})
	if err != nil && !errors.Is(err, storage.ErrExists) {
		return fmt.Errorf("recording resolution of ply %d blob %d: %w", m.Ply, m.Index, err)
	}
	return t.afterResolve(ctx, m.Ply)
}

func resultBlob(ply, j int) string { return blobFor(ply, fmt.Sprintf("r-%06d", j)) }

func isResultBlob(name string) bool {
	return len(name) > 6 && name[4:6] == "r-"
}

// sendNotices reports each known result of a final blob to its parents:
// one packed row per parent blob, upserted under a key derived from the
// child blob, so a retry overwrites instead of adding.
func (r *Run) sendNotices(ctx context.Context, ply, j int, blob string, results []byte) error {
	payload, err := r.readSources(ctx, blob)
	if err != nil {
		return err
	}
	byParent := map[uint32][]backtrack.Notice{}
	sr := backtrack.NewSourceReader(payload)
	var refs []backtrack.Ref
	n := len(results) / backtrack.ResultLen
	for i := 0; i < n; i++ {
		var ok bool
		refs, ok = sr.Next(refs)
		if !ok {
			if sr.Err() != nil {
				return fmt.Errorf("backtracking rows of %s: %w", blob, sr.Err())
			}
			return fmt.Errorf("backtracking rows of %s cover %d of %d positions", blob, i, n)
		}
		res, score := backtrack.DecodeResult(results, i)
		if res == board.Unknown {
			continue
		}
		for _, ref := range refs {
			byParent[ref.Blob] = append(byParent[ref.Blob], backtrack.Notice{Index: ref.Index, Result: res, Score: score})
		}
	}
	parents := make([]uint32, 0, len(byParent))
	for p := range byParent {
		parents = append(parents, p)
	}
	slices.Sort(parents)
	for _, p := range parents {
		ns := byParent[p]
		slices.SortFunc(ns, func(a, b backtrack.Notice) int { return int(a.Index) - int(b.Index) })
		rows := backtrack.SplitRows(backtrack.AppendNotices(nil, ns))
		pk := noticePartition(ply-1, int(p))
		for i := 0; i < len(rows); i += backtrack.RowsPerBatch {
			var ops []storage.Op
			for k := i; k < min(len(rows), i+backtrack.RowsPerBatch); k++ {
				ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%06d-%03d", j, k), Props: rows[k]}})
			}
			if _, err := r.back.Transact(ctx, pk, ops); err != nil {
				return fmt.Errorf("sending notices to ply %d blob %d: %w", ply-1, p, err)
			}
		}
	}
	return nil
}

// afterResolve completes the ply's resolution once every blob is resolved.
func (t *task) afterResolve(ctx context.Context, plyNo int) error {
	r := t.run
	ply, err := r.getPly(ctx, plyNo)
	if err != nil {
		return err
	}
	mine := claimID(t.msg.ID, 0)
	if ply.Resolved {
		if ply.ResolveOwner == mine && !ply.ResDispatch {
			return r.dispatchResolve(ctx, ply)
		}
		return nil
	}
	es, err := queryAll(ctx, r.state, pkResolve(plyNo), "d", "e")
	if err != nil {
		return err
	}
	if len(es) < len(ply.Blobs) {
		return nil
	}
	var black, white, draws, unknown int64
	for _, e := range es {
		black += propInt(e, "Black")
		white += propInt(e, "White")
		draws += propInt(e, "Draws")
		unknown += propInt(e, "Unknown")
	}
	return r.finishResolve(ctx, ply, mine, black, white, draws, unknown)
}

// finishResolve marks a ply resolved, exactly once (ETag), and lets its
// owner start the previous ply's resolution.
func (r *Run) finishResolve(ctx context.Context, ply *plyRecord, owner string, black, white, draws, unknown int64) error {
	ply.Resolved, ply.ResolveOwner, ply.ResDispatch = true, owner, false
	ply.Black, ply.White, ply.Draws, ply.Unknown = black, white, draws, unknown
	if err := r.updatePly(ctx, ply); err != nil {
		if errors.Is(err, storage.ErrPreconditionFailed) {
			return nil
		}
		return err
	}
	return r.dispatchResolve(ctx, ply)
}

func (r *Run) dispatchResolve(ctx context.Context, ply *plyRecord) error {
	if ply.Ply == 0 {
		root := board.Unknown
		switch {
		case ply.Black > 0:
			root = board.BlackWins
		case ply.White > 0:
			root = board.WhiteWins
		case ply.Draws > 0:
			root = board.Draw
		}
		done := map[string]any{"Root": root.String(), "Completed": time.Now().UnixNano()}
		if ply.Positions > 0 {
			e, err := r.state.Get(ctx, pkResolve(0), resolveMarker(0))
			if err != nil {
				return fmt.Errorf("reading the start position's resolution: %w", err)
			}
			if b, w := propInt(e, "ScoreBlack"), propInt(e, "ScoreWhite"); b+w > 0 {
				done["ScoreBlack"], done["ScoreWhite"] = b, w
			}
		}
		_, err := r.state.Upsert(ctx, storage.Entity{PartitionKey: pkRun, RowKey: rkDone, Props: done})
		if err != nil {
			return fmt.Errorf("marking the run complete: %w", err)
		}
	} else {
		prev, err := r.getPly(ctx, ply.Ply-1)
		if err != nil {
			return err
		}
		for j := range prev.Blobs {
			if err := r.enqueue(ctx, Message{Kind: KindResolve, Ply: prev.Ply, Index: j}); err != nil {
				return err
			}
		}
	}
	ply.ResDispatch = true
	if err := r.updatePly(ctx, ply); err != nil && !errors.Is(err, storage.ErrPreconditionFailed) {
		return err
	}
	return nil
}

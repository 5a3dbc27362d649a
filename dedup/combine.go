package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// CombineHandler handles G messages, the first merge level of a ply with
// a combine level (runstore.Sizes.Levels): combine task g*Ranges+r
// k-way merges group g's segments of range r into one run of edges, cut
// at the range's buckets like an expansion run, and commits it with its
// marker (runstore.CombineStage; task.Items carries the sequence). The
// ply's bucket merges then read one segment of each group's run instead
// of one of each expansion run.
//
// Its inputs are its list of its group's inputs blob (combineInputs).
// The scan enqueues each group's first task, which writes that blob from
// the group's expansion markers and then enqueues the group's other
// tasks: each group's markers are read once, by one task.
//
// The run is streamed to storage as it is merged: its size is about one
// bucket's edges times the range's buckets, and no more than a few
// blocks of it are held at once.
//
// Crash points are an expansion task's: the blob carries this attempt's
// tag and a compensation message covers it until the marker names it;
// the marker is added once, so of two attempts the first wins and the
// other's blob is left to its message; a redelivery that finds the
// marker only repeats the follow-up (the scan once every combine is
// done). The commit comes only while the compensation message is still
// hidden.
var CombineHandler task.Handler = task.Items[runstore.Combine]{
	Stage:    (*runstore.Store).CombineStage,
	Work:     combineTask,
	FollowUp: afterCombine,
}

// combineTask merges combine task i's inputs into its run and returns
// the marker that records it and the compensation message that covers
// its blob (a task without inputs writes none).
func combineTask(ctx context.Context, t *task.Task, p *runstore.Ply, i int) (runstore.Combine, task.Cover, error) {
	run := t.Run
	inputs, wrote, err := combineInputs(ctx, t, p, i)
	if err != nil {
		return runstore.Combine{}, nil, err
	}
	if wrote && i%p.Ranges == 0 {
		// The scan started the group with its first task; the others
		// read the inputs it wrote. A crash before they are enqueued
		// leaves them to the scan of a stalled run.
		if err := enqueueAll(ctx, t, message.KindCombine, p.Ply, seq(i+1, i+p.Ranges)); err != nil {
			return runstore.Combine{}, nil, err
		}
	}
	splitters, err := ReadSplitters(ctx, run, p.Ply)
	if err != nil {
		return runstore.Combine{}, nil, err
	}
	if len(splitters)+1 != p.Buckets {
		return runstore.Combine{}, nil, fmt.Errorf("ply %d has %d buckets but %d splitters: its records are inconsistent", p.Ply, p.Buckets, len(splitters))
	}
	span := runstore.SpanOf(i%p.Ranges, p.Buckets, p.Ranges)
	c := runstore.Combine{Index: i, Attempt: t.Attempt(), Segments: int64(len(inputs))}
	comps := &compensation.Set{}
	if len(inputs) > 0 {
		c.Blob = runstore.CombineBlobName(p.Ply, i, t.Attempt())
		if err := comps.Cover(ctx, t, p.Ply, c.Blob); err != nil {
			return runstore.Combine{}, nil, err
		}
		if c.Cuts, c.Entries, err = combineInto(ctx, t, c.Blob, inputs, splitters[span.Lo:span.Hi-1]); err != nil {
			return runstore.Combine{}, nil, fmt.Errorf("combining task %d of ply %d: %w", i, p.Ply, err)
		}
	}
	return c, comps, nil
}

// combineInputs reads combine task i's list from its group's inputs
// blob, which the first of the group's tasks to find it missing writes
// from the group's expansion markers (wrote then reports this call did).
// Its content depends on those alone, which no longer change once the
// ply is merging: of tasks that write it together, the first write
// stands and the others read the same lists. A task that starts after
// its group's release deleted the blob writes it again, and then fails
// to read the deleted runs; its redelivery finds its marker, and the
// ply's sweep the blob.
func combineInputs(ctx context.Context, t *task.Task, p *runstore.Ply, i int) (inputs []Input, wrote bool, err error) {
	g, r := i/p.Ranges, i%p.Ranges
	name := runstore.CombineInputsBlobName(p.Ply, g)
	inputs, err = ReadInputs(ctx, t.Run, name, r, p.Ranges)
	if !errors.Is(err, storage.ErrNotFound) {
		return inputs, false, err
	}
	group, err := t.Run.Store.ExpansionStage(p).MarkersIn(ctx, runstore.SpanOf(g, p.Tasks, p.Groups))
	if err != nil {
		return nil, false, err
	}
	lists := CombineInputs(group, p.Buckets, p.Ranges)
	wrote, swept, err := putInputs(ctx, t, p.Ply, name, lists, 1)
	switch {
	case err != nil:
		return nil, false, err
	case swept:
		return nil, false, fmt.Errorf("ply %d was made final while combine task %d read its inputs", p.Ply, i)
	}
	return lists[r], wrote, nil
}

// combineInto merges the inputs into blob name, cut at the splitters
// (the inner bounds of the range's buckets), as the merge goes: the
// writer feeds the upload through a pipe. It returns the cuts (the start
// of each bucket, then the end) and the entries written.
func combineInto(ctx context.Context, t *task.Task, name string, inputs []Input, splitters []board.Position) (cuts []int64, entries int64, err error) {
	readers, closeReaders, err := openInputs(ctx, t.Run, inputs)
	if err != nil {
		return nil, 0, err
	}
	defer closeReaders()
	pr, pw := io.Pipe()
	merged := make(chan error, 1)
	go func() {
		var werr error
		cuts, entries, werr = writeCut(pw, readers, splitters)
		pw.CloseWithError(werr)
		merged <- werr
	}()
	uerr := t.Run.Blobs.Upload(ctx, name, pr)
	pr.CloseWithError(errUploadEnded) // stops the merge if the upload gave up early
	switch werr := <-merged; {
	case werr != nil && !errors.Is(werr, errUploadEnded):
		return nil, 0, werr
	case uerr != nil:
		return nil, 0, fmt.Errorf("writing combined run %s: %w", name, uerr)
	}
	return cuts, entries, ctx.Err()
}

// errUploadEnded is what the merge's writes return once the upload has
// stopped reading.
var errUploadEnded = errors.New("dedup: the upload ended before the merge")

// writeCut merges readers into w as packed edges, ending a segment at
// each splitter, and returns the cuts and the entries written.
func writeCut(w io.Writer, readers []*packed.EdgeReader, splitters []board.Position) (cuts []int64, entries int64, err error) {
	ew, err := packed.NewEdgeWriter(w, packed.Options{})
	if err != nil {
		return nil, 0, err
	}
	cuts = make([]int64, 1, len(splitters)+2)
	next := 0 // the next splitter to pass
	_, err = Merge(readers, func(e Entry) error {
		for next < len(splitters) && board.Compare(e.Pos, splitters[next]) >= 0 {
			end, err := ew.EndSegment()
			if err != nil {
				return err
			}
			cuts = append(cuts, end)
			next++
		}
		entries++
		return ew.Add(e)
	})
	if err != nil {
		return nil, 0, err
	}
	for ; next <= len(splitters); next++ {
		end, err := ew.EndSegment()
		if err != nil {
			return nil, 0, err
		}
		cuts = append(cuts, end)
	}
	return cuts, entries, ew.Close()
}

// afterCombine deletes the expansion runs that combine task i was the
// last to need (releaseGroup), then enqueues the scan that starts the
// bucket merges once every combine task is done. The scan may be
// enqueued more than once, which is harmless.
func afterCombine(ctx context.Context, t *task.Task, st runstore.Stage[runstore.Combine], i int) error {
	p := st.Ply()
	if err := releaseGroup(ctx, t, p, i/p.Ranges); err != nil {
		return err
	}
	all, err := st.AllDone(ctx, i)
	if err != nil || !all {
		return err
	}
	return t.Run.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply})
}

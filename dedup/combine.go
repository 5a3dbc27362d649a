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

// CombineHandler handles G messages, the combine levels of a ply that
// has them (runstore.Sizes.Levels). A G message's index numbers every
// level's tasks in turn (runstore.Ply.CombineIndex); task g*Ranges+r of
// a level k-way merges group g's segments of range r (of the expansion
// runs below the first level, of the runs of the level below above it)
// into one run of edges, cut at the range's buckets like an expansion
// run, and commits it with its marker (runstore.CombineStage; task.Items
// carries the sequence). The ply's bucket merges then read one segment of
// each group's run of the last level.
//
// Each level starts from the scan once the level below is complete. The
// scan enqueues the first task of group 0; the first task of group g
// enqueues the first tasks of groups g*partFan+1 to g*partFan+partFan
// and its group's other tasks, and each of those tasks its children in
// the group's tree (treeChildren: all of them from the first in a group
// of at most partFan+1 ranges), so that no handling enqueues more than
// 2*partFan other tasks however many ranges a group has; on the first level,
// past group 0, the first task then sends itself again after them, so
// that the groups run in turn. A first level's inputs are its list of its
// group's inputs blob (combineInputs), which its first task writes from
// the group's expansion markers: each group's markers are read once, by
// one task; a task above reads the markers of the runs it reads itself
// (upperInputs), a point read each.
//
// The run is streamed to storage as it is merged: its size is about one
// bucket's edges times the range's buckets, and no more than a few
// blocks of it are held at once.
//
// Crash points are an expansion task's: the blob carries this attempt's
// tag and a compensation message covers it until the marker names it;
// the marker is added once, so of two attempts the first wins and the
// other's blob is left to its message; a redelivery that finds the
// marker only repeats the follow-up (releasing what became spent, and
// the scan once the level is done). The commit comes only while the
// compensation message is still hidden. A first task that dies before
// enqueuing the others leaves them to the scan of a stalled run.
var CombineHandler task.Handler = task.Items[runstore.Combine]{
	Stage: combineStage,
	Work: func(ctx context.Context, t *task.Task, p *runstore.Ply, m message.Message) (runstore.Combine, task.Cover, error) {
		return combineTask(ctx, t, p, m.Index)
	},
	FollowUp: afterCombine,
}

// combineStage is the stage of ply-wide combine task i and its index
// there (a task the ply lacks is one its stage refuses).
func combineStage(s *runstore.Store, p *runstore.Ply, i int) (runstore.Stage[runstore.Combine], int) {
	level, j, _ := p.CombineAt(i)
	return s.CombineStage(p, level), j
}

// combineTask merges combine task i's inputs into its run and returns
// the marker that records it and the compensation message that covers
// its blob (a task without inputs writes none).
func combineTask(ctx context.Context, t *task.Task, p *runstore.Ply, i int) (runstore.Combine, task.Cover, error) {
	run := t.Run
	level, j, _ := p.CombineAt(i)
	l := p.Levels[level]
	g, r := j/l.Ranges, j%l.Ranges
	var inputs []Input
	start := r == 0 // the group's first task starts the others
	var err error
	if level == 0 {
		var wrote bool
		inputs, wrote, err = combineInputs(ctx, t, p, j)
		start = start && wrote // once, by the delivery that wrote the inputs
	} else {
		inputs, err = upperInputs(ctx, t, p, level, j)
	}
	if err != nil {
		return runstore.Combine{}, nil, err
	}
	// The group's tasks this one starts, of its tree (treeChildren says
	// on which deliveries).
	group := offset(i-r, treeChildren(r, l.Ranges))
	switch {
	case start:
		var firsts []int
		for _, h := range treeChildren(g, l.Groups) {
			firsts = append(firsts, p.CombineIndex(level, h*l.Ranges))
		}
		// A first-level group other than the first takes its turn: once,
		// as the delivery that wrote the group's inputs blob. A level
		// above has no such blob to tell its first delivery, and its runs
		// are a fleet's.
		if err := startPart(ctx, t, message.KindCombine, p.Ply, group, firsts, i, level == 0 && g > 0); err != nil {
			return runstore.Combine{}, nil, err
		}
	case r > 0:
		if err := enqueueAll(ctx, t, message.KindCombine, p.Ply, group); err != nil {
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
	span := runstore.SpanOf(r, p.Buckets, l.Ranges)
	c := runstore.Combine{Level: level, Index: j, Attempt: t.Attempt(), Segments: int64(len(inputs))}
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

// combineInputs reads first-level combine task j's list from its group's
// inputs blob, which the first of the group's tasks to find it missing
// writes from the group's expansion markers (wrote then reports this
// call did). Its content depends on those alone, which no longer change
// once the ply is merging: of tasks that write it together, the first
// write stands and the others read the same lists. A task that starts
// after its group's release deleted the blob writes it again, and then
// fails to read the deleted runs; its redelivery finds its marker, and
// the ply's sweep the blob.
func combineInputs(ctx context.Context, t *task.Task, p *runstore.Ply, j int) (inputs []Input, wrote bool, err error) {
	l := p.Levels[0]
	g, r := j/l.Ranges, j%l.Ranges
	name := runstore.CombineInputsBlobName(p.Ply, g)
	inputs, err = ReadInputs(ctx, t.Run, name, r, l.Ranges)
	if !errors.Is(err, storage.ErrNotFound) {
		return inputs, false, err
	}
	group, err := t.Run.Store.ExpansionStage(p).MarkersIn(ctx, p.Children(0, g))
	if err != nil {
		return nil, false, err
	}
	lists := CombineInputs(group, p.Buckets, l.Ranges)
	wrote, swept, err := putInputs(ctx, t, p.Ply, name, lists, 1)
	switch {
	case err != nil:
		return nil, false, err
	case swept:
		return nil, false, fmt.Errorf("ply %d was made final while combine task %d read its inputs", p.Ply, j)
	}
	return lists[r], wrote, nil
}

// upperInputs lists the segments that task j of combine level level
// (above the first) reads: of each run of its group's children (groups
// of the level below) whose range overlaps its own, the bytes of the
// buckets the two ranges share. It reads the markers of those runs, a
// point read each: its children times the one or two ranges of the level
// below that its range overlaps (ranges grow finer level by level).
func upperInputs(ctx context.Context, t *task.Task, p *runstore.Ply, level, j int) ([]Input, error) {
	markers, err := markersBelow(ctx, t, p, level, j)
	if err != nil {
		return nil, err
	}
	span := runstore.SpanOf(j%p.Levels[level].Ranges, p.Buckets, p.Levels[level].Ranges)
	below := p.Levels[level-1]
	var inputs []Input
	for _, m := range markers {
		if m.Blob == "" {
			continue // the group had no edges in the range
		}
		from := runstore.SpanOf(m.Index%below.Ranges, p.Buckets, below.Ranges)
		lo, hi := max(span.Lo, from.Lo), min(span.Hi, from.Hi)
		if off, end := m.Cuts[lo-from.Lo], m.Cuts[hi-from.Lo]; end > off {
			inputs = append(inputs, Input{Blob: m.Blob, Off: off, Len: end - off})
		}
	}
	return inputs, nil
}

// markersBelow reads the markers of the runs of the level below that task j
// of level (above the first) reads, or fails if one is missing: the
// level below is complete before any task of level starts.
func markersBelow(ctx context.Context, t *task.Task, p *runstore.Ply, level, j int) ([]runstore.Combine, error) {
	items := readsFrom(p, level, j)
	markers, err := t.Run.Store.CombineStage(p, level-1).MarkersAt(ctx, items)
	switch {
	case err != nil:
		return nil, err
	case len(markers) < len(items):
		return nil, fmt.Errorf("combine task %d of ply %d: %d of the %d runs it reads are done", p.CombineIndex(level, j), p.Ply, len(markers), len(items))
	}
	return markers, nil
}

// readsFrom lists the tasks of the level below whose runs task j of
// level (above the first) reads.
func readsFrom(p *runstore.Ply, level, j int) []int {
	l := p.Levels[level]
	return p.Levels[level-1].TasksOf(p.Children(level, j/l.Ranges), p.Reads(level, j%l.Ranges))
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
	_, err = Merge(readers, func(es []Entry) error {
		for _, e := range es {
			for next < len(splitters) && board.Compare(e.Pos, splitters[next]) >= 0 {
				end, err := ew.EndSegment()
				if err != nil {
					return err
				}
				cuts = append(cuts, end)
				next++
			}
			entries++
			if err := ew.Add(e); err != nil {
				return err
			}
		}
		return nil
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

// afterCombine deletes the runs that combine task i was the last to need
// (release), then enqueues the scan that starts the next level, or the
// bucket merges, once every task of its level is done. The scan may be
// enqueued more than once, which is harmless.
func afterCombine(ctx context.Context, t *task.Task, st runstore.Stage[runstore.Combine], i int) error {
	p := st.Ply()
	level, j, _ := p.CombineAt(i)
	if err := release(ctx, t, p, level, j); err != nil {
		return err
	}
	all, err := st.AllDone(ctx, j)
	if err != nil || !all {
		return err
	}
	return t.Run.Enqueue(ctx, message.Message{Kind: message.KindScan, Ply: p.Ply})
}

package dedup

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Releasing: on a ply with combine levels, the disk follows the work.
// Each first-level group's expansion runs are deleted once the group's
// combine tasks are done, each run of a level below the last once the
// tasks above that read it are, and each range's runs of the last level
// once the range's buckets are merged (runstore.Spent owns the rule). Without it a ply holds every
// expansion run until it is Final, next to its final blobs as they are
// written: at 8x8 ply 14 more disk than one machine has.
//
// The task that commits an item releases what that commit made spent;
// a redelivery releases again, deleting what is left. A crash between
// the commit and the deletions leaves the blobs to the redelivery, or to
// the sweep when the ply is Final. Deleting a blob that another attempt
// still reads makes that attempt fail, and its redelivery finds the
// marker that made the blob spent.

// release deletes the runs that task j of combine level level made
// spent with its commit (runstore.Spent): on the first level, its group's
// expansion runs once the group is done (releaseGroup); above, each run
// of the level below that it read, once every task of its group that
// reads that run's range is done. It reads its group's markers of those
// tasks (one range query a range below) and, for a range found done,
// the runs' markers (a point read a child).
func release(ctx context.Context, t *task.Task, p *runstore.Ply, level, j int) error {
	if level == 0 {
		return releaseGroup(ctx, t, p, j/p.Levels[0].Ranges)
	}
	store := t.Run.Store
	l, below := p.Levels[level], p.Levels[level-1]
	g := j / l.Ranges
	reads := p.Reads(level, j%l.Ranges)
	for r := reads.Lo; r < reads.Hi; r++ {
		over := p.Overlapping(level-1, r)
		readers, err := store.CombineStage(p, level).MarkersIn(ctx, runstore.Span{Lo: g*l.Ranges + over.Lo, Hi: g*l.Ranges + over.Hi})
		if err != nil || len(readers) < over.Hi-over.Lo {
			return err // range r of the runs below is still read
		}
		runs, err := store.CombineStage(p, level-1).MarkersAt(ctx, below.TasksOf(p.Children(level, g), runstore.Span{Lo: r, Hi: r + 1}))
		if err != nil {
			return err
		}
		spent := runstore.Spent(p, runstore.Records{Combines: append(runs, readers...)})
		for _, c := range runs {
			if spent[c.Blob] {
				if err := deleteSpent(ctx, t, c.Blob); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// releaseGroup deletes the expansion runs of group g of p's first
// combine level, and the group's inputs blob, once every combine task of
// g is done. It reads the group's own markers only: its combine tasks
// (g*Ranges to g*Ranges+Ranges-1, one range query), and its expansion
// tasks only once those are all done.
func releaseGroup(ctx context.Context, t *task.Task, p *runstore.Ply, g int) error {
	store := t.Run.Store
	first := p.Levels[0]
	combines, err := store.CombineStage(p, 0).MarkersIn(ctx, runstore.Span{Lo: g * first.Ranges, Hi: (g + 1) * first.Ranges})
	if err != nil || len(combines) < first.Ranges {
		return err // nothing of g is spent yet
	}
	exps, err := store.ExpansionStage(p).MarkersIn(ctx, p.Children(0, g))
	if err != nil {
		return err
	}
	spent := runstore.Spent(p, runstore.Records{Expansions: exps, Combines: combines})
	for _, e := range exps {
		if spent[e.Blob] {
			if err := deleteSpent(ctx, t, e.Blob); err != nil {
				return err
			}
		}
	}
	return deleteSpent(ctx, t, runstore.CombineInputsBlobName(p.Ply, g))
}

// releaseRange deletes the last combine level's runs of range r of p,
// and the range's inputs blob, once every bucket of r is merged. It
// reads the range's own markers only: its buckets' (one range query),
// and only once those are all merged, the range's task of each group of
// the last level (one point read a group).
func releaseRange(ctx context.Context, t *task.Task, p *runstore.Ply, r int) error {
	store := t.Run.Store
	top := p.Top()
	span := runstore.SpanOf(r, p.Buckets, top.Ranges)
	merges, err := store.MergeStage(p).MarkersIn(ctx, span)
	if err != nil || len(merges) < span.Hi-span.Lo {
		return err // nothing of r is spent yet
	}
	combines, err := store.CombineStage(p, len(p.Levels)-1).MarkersAt(ctx, rangeTasks(p, r))
	if err != nil {
		return err
	}
	spent := runstore.Spent(p, runstore.Records{Combines: combines, Merges: merges})
	for _, c := range combines {
		if spent[c.Blob] {
			if err := deleteSpent(ctx, t, c.Blob); err != nil {
				return err
			}
		}
	}
	return deleteSpent(ctx, t, runstore.RangeInputsBlobName(p.Ply, r))
}

// rangeTasks lists the tasks of p's last combine level of range r, one
// a group: those whose runs the range's bucket merges read.
func rangeTasks(p *runstore.Ply, r int) []int {
	top := p.Top()
	return top.TasksOf(runstore.Span{Lo: 0, Hi: top.Groups}, runstore.Span{Lo: r, Hi: r + 1})
}

func deleteSpent(ctx context.Context, t *task.Task, name string) error {
	if err := storage.DeleteBlob(ctx, t.Run.Blobs, name); err != nil {
		return fmt.Errorf("deleting spent blob %s: %w", name, err)
	}
	return nil
}

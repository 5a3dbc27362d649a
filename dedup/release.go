package dedup

import (
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Releasing: on a ply with a combine level, the disk follows the work.
// Each group's expansion runs are deleted once the group's combine tasks
// are done, and each range's combined runs once the range's buckets are
// merged (runstore.Spent owns the rule). Without it a ply holds every
// expansion run until it is Final, next to its final blobs as they are
// written: at 8x8 ply 14 more disk than one machine has.
//
// The task that commits an item releases what that commit made spent;
// a redelivery releases again, deleting what is left. A crash between
// the commit and the deletions leaves the blobs to the redelivery, or to
// the sweep when the ply is Final. Deleting a blob that another attempt
// still reads makes that attempt fail, and its redelivery finds the
// marker that made the blob spent.

// releaseGroup deletes the expansion runs of group g of p, and the
// group's inputs blob, once every combine task of g is done. It reads the group's own markers only: its
// combine tasks (g*Ranges to g*Ranges+Ranges-1, one range query), and
// its expansion tasks only once those are all done.
func releaseGroup(ctx context.Context, t *task.Task, p *runstore.Ply, g int) error {
	store := t.Run.Store
	combines, err := store.CombineStage(p).MarkersIn(ctx, runstore.Span{Lo: g * p.Ranges, Hi: (g + 1) * p.Ranges})
	if err != nil || len(combines) < p.Ranges {
		return err // nothing of g is spent yet
	}
	exps, err := store.ExpansionStage(p).MarkersIn(ctx, runstore.SpanOf(g, p.Tasks, p.Groups))
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

// releaseRange deletes the combined runs of range r of p, and the
// range's inputs blob, once every bucket of r is merged. It reads the range's own markers only: its
// buckets' (one range query), and only once those are all merged, the
// range's combine task of each group (one point read a group).
func releaseRange(ctx context.Context, t *task.Task, p *runstore.Ply, r int) error {
	store := t.Run.Store
	span := runstore.SpanOf(r, p.Buckets, p.Ranges)
	merges, err := store.MergeStage(p).MarkersIn(ctx, span)
	if err != nil || len(merges) < span.Hi-span.Lo {
		return err // nothing of r is spent yet
	}
	items := make([]int, p.Groups)
	for g := range items {
		items[g] = g*p.Ranges + r
	}
	combines, err := store.CombineStage(p).MarkersAt(ctx, items)
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

func deleteSpent(ctx context.Context, t *task.Task, name string) error {
	if err := storage.DeleteBlob(ctx, t.Run.Blobs, name); err != nil {
		return fmt.Errorf("deleting spent blob %s: %w", name, err)
	}
	return nil
}

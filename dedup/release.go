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

// releaseGroup deletes the expansion runs of group g of p once every
// combine task of g is done.
func releaseGroup(ctx context.Context, t *task.Task, p *runstore.Ply, g int) error {
	store := t.Run.Store
	combines, err := store.CombineStage(p).Markers(ctx)
	if err != nil {
		return err
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
	return nil
}

// releaseRange deletes the combined runs of range r of p once every
// bucket of r is merged.
func releaseRange(ctx context.Context, t *task.Task, p *runstore.Ply, r int) error {
	store := t.Run.Store
	merges, err := store.MergeStage(p).Markers(ctx)
	if err != nil {
		return err
	}
	combines, err := store.CombineStage(p).Markers(ctx)
	if err != nil {
		return err
	}
	spent := runstore.Spent(p, runstore.Records{Combines: combines, Merges: merges})
	for _, c := range combines {
		if c.Index%p.Ranges == r && spent[c.Blob] {
			if err := deleteSpent(ctx, t, c.Blob); err != nil {
				return err
			}
		}
	}
	return nil
}

func deleteSpent(ctx context.Context, t *task.Task, name string) error {
	if err := storage.DeleteBlob(ctx, t.Run.Blobs, name); err != nil {
		return fmt.Errorf("deleting spent blob %s: %w", name, err)
	}
	return nil
}

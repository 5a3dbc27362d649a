package dedup

import (
	"bytes"
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// sampleKeys is how many positions a final run keeps as samples for
// choosing the next ply's splitters.
const sampleKeys = 256

// output receives a bucket's merged entries in order and writes them as
// final blobs of at most BlobPositions distinct positions, each with its
// backtracking rows: the parents of every position, folded together.
type output struct {
	ctx    context.Context
	t      *task.Task
	ply    int
	bucket int

	runs  []*runstore.Run
	comps []*compensation.Pending

	// the current blob
	keys        []byte
	sources     []byte
	count       int64
	terminal    int64
	first, last board.Position

	// the position being grouped, and its parents so far
	pending bool
	cur     board.Position
	refs    []backtrack.Ref
}

func newOutput(ctx context.Context, t *task.Task, ply, bucket int) *output {
	return &output{ctx: ctx, t: t, ply: ply, bucket: bucket}
}

func (o *output) add(e Entry) error {
	ref := backtrack.Ref{Blob: e.Ref.Blob, Index: e.Ref.Index}
	if o.pending && e.Pos == o.cur {
		o.refs = append(o.refs, ref)
		return nil
	}
	if o.pending {
		if err := o.emit(); err != nil {
			return err
		}
	}
	o.pending, o.cur = true, e.Pos
	o.refs = append(o.refs[:0], ref)
	return nil
}

// emit adds the pending position to the current blob.
func (o *output) emit() error {
	if o.count == 0 {
		o.first = o.cur
	}
	o.keys = o.cur.AppendKey(o.keys)
	o.sources = backtrack.AppendSources(o.sources, o.refs)
	if o.t.Run.Board.Terminal(o.cur) {
		o.terminal++
	}
	o.last = o.cur
	o.count++
	if o.count >= int64(o.t.Run.BlobPositions) {
		return o.flush()
	}
	return nil
}

// flush uploads the current blob and its backtracking rows under a
// compensation message.
func (o *output) flush() error {
	if o.count == 0 {
		return nil
	}
	name := runstore.FinalRunBlobName(o.ply, o.bucket, len(o.runs), o.t.Attempt())
	comp, err := compensation.Cover(o.ctx, o.t, o.ply, name)
	if err != nil {
		return err
	}
	o.comps = append(o.comps, comp)
	if err := o.t.Run.Blobs.Upload(o.ctx, name, bytes.NewReader(o.keys)); err != nil {
		return fmt.Errorf("writing merge output %s: %w", name, err)
	}
	if err := o.t.Run.Store.PutSources(task.WithCategory(o.ctx, task.CategoryBacktrack), name, o.sources); err != nil {
		return err
	}
	if err := comp.Check(); err != nil {
		return err
	}
	o.runs = append(o.runs, &runstore.Run{
		Blob: name, Count: o.count, Min: o.first, Max: o.last, Terminal: o.terminal,
		Samples: sampleOf(o.keys, sampleKeys),
	})
	o.keys, o.sources, o.count, o.terminal = o.keys[:0], o.sources[:0], 0, 0
	return nil
}

// close writes the last position and the last blob.
func (o *output) close() error {
	if o.pending {
		if err := o.emit(); err != nil {
			return err
		}
		o.pending = false
	}
	return o.flush()
}

// sampleOf picks up to n evenly spaced keys from a sorted key list.
func sampleOf(keys []byte, n int) []byte {
	total := len(keys) / board.KeyLen
	if total <= n {
		return append([]byte(nil), keys...)
	}
	out := make([]byte, 0, n*board.KeyLen)
	for i := 0; i < n; i++ {
		k := i * total / n
		out = append(out, keys[k*board.KeyLen:(k+1)*board.KeyLen]...)
	}
	return out
}

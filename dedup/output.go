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

// output receives merged entries in order and writes a merge's outputs:
// one run of edges for a partial merge, or final blobs of at most
// BlobPositions distinct positions, each with its backtracking rows.
type output struct {
	ctx   context.Context
	t     *task.Task
	ply   int
	claim runstore.Claim

	runs  []*runstore.Run
	comps []*compensation.Pending

	// partial output
	data     []byte
	first    board.Position
	last     board.Position
	nEntries int64

	// final output: the current blob, and the position being grouped
	keys     []byte
	sources  []byte
	count    int64
	terminal int64
	pending  bool
	cur      board.Position
	refs     []backtrack.Ref
}

func newOutput(ctx context.Context, t *task.Task, ply int, c runstore.Claim) *output {
	return &output{ctx: ctx, t: t, ply: ply, claim: c}
}

func (o *output) add(e Entry) error {
	if !o.claim.Final {
		if o.nEntries == 0 {
			o.first = e.Pos
		}
		o.nEntries++
		o.data = AppendEntry(o.data, e)
		o.last = e.Pos
		return nil
	}
	if o.pending && e.Pos == o.cur {
		o.refs = append(o.refs, backtrack.Ref{Blob: e.Ref.Blob, Index: e.Ref.Index})
		return nil
	}
	if o.pending {
		if err := o.emit(); err != nil {
			return err
		}
	}
	o.pending, o.cur = true, e.Pos
	o.refs = append(o.refs[:0], backtrack.Ref{Blob: e.Ref.Blob, Index: e.Ref.Index})
	return nil
}

// emit adds the pending position to the current final blob.
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
		return o.flushFinal()
	}
	return nil
}

// write uploads one output blob under a compensation message.
func (o *output) write(name string, data []byte, also func() error) error {
	comp, err := compensation.Cover(o.ctx, o.t, o.ply, name)
	if err != nil {
		return err
	}
	o.comps = append(o.comps, comp)
	if err := o.t.Run.Blobs.Upload(o.ctx, name, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("writing merge output %s: %w", name, err)
	}
	if also != nil {
		if err := also(); err != nil {
			return err
		}
	}
	return comp.Check()
}

func (o *output) flushFinal() error {
	if o.count == 0 {
		return nil
	}
	name := runstore.FinalRunBlobName(o.ply, o.claim, len(o.runs), o.t.Attempt())
	err := o.write(name, o.keys, func() error {
		return o.t.Run.Store.PutSources(task.WithCategory(o.ctx, task.CategoryBacktrack), name, o.sources)
	})
	if err != nil {
		return err
	}
	o.runs = append(o.runs, &runstore.Run{
		Blob: name, Len: int64(len(o.keys)), Count: o.count,
		Min: o.first, Max: o.last, Created: o.t.Now().UnixNano(), Final: true, Terminal: o.terminal,
		Samples: sampleOf(o.keys, sampleKeys),
	})
	o.keys, o.sources, o.count, o.terminal = o.keys[:0], o.sources[:0], 0, 0
	return nil
}

func (o *output) close() error {
	if o.claim.Final {
		if o.pending {
			if err := o.emit(); err != nil {
				return err
			}
			o.pending = false
		}
		return o.flushFinal()
	}
	if o.nEntries == 0 {
		return nil
	}
	name := runstore.MergedBlobName(o.ply, o.claim, o.t.Attempt())
	if err := o.write(name, o.data, nil); err != nil {
		return err
	}
	o.runs = append(o.runs, &runstore.Run{
		Blob: name, Len: int64(len(o.data)), Count: o.nEntries,
		Min: o.first, Max: o.last, Created: o.t.Now().UnixNano(),
	})
	return nil
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

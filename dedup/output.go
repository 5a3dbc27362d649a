package dedup

import (
	"bytes"
	"context"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Samples for choosing the next ply's splitters: a final run keeps up
// to sampleKeys of its positions, and fewer in a ply of many final blobs,
// so that a ply's samples stay within maxPlySamples. The scan that
// finishes the ply holds them all and expands them (ChooseSplitters):
// at 2^18 samples, about 10 children each, that is some 60 MB, and
// still hundreds of children a bucket at the most buckets a ply has.
const (
	sampleKeys    = 256
	maxPlySamples = 1 << 18
)

// samplesPerRun is how many samples each final run of a ply keeps, given
// its buckets and their size in final blobs.
func samplesPerRun(buckets, bucketBlobs int) int64 {
	return int64(min(sampleKeys, max(1, maxPlySamples/max(1, buckets*bucketBlobs))))
}

// output receives a bucket's merged entries in order and writes them as
// final blobs of at most BlobPositions distinct positions (packed keys),
// each with its backtracking rows: the parents of every position, folded
// together (packed sources), or of its terminal positions only when the
// ply says so (runstore.Ply.TerminalSources).
type output struct {
	ctx    context.Context
	t      *task.Task
	ply    int
	bucket int
	size   int64         // positions a final blob (task.Run.FinalPositions)
	every  int64         // a sample every that many positions: size/samplesPerRun
	rec    *runstore.Ply // which positions keep backtracking rows (KeepsSources)

	runs  []*runstore.MergedBlob
	comps compensation.Set // one message for all the blobs written (or one each: flush)

	// the current blob: its keys and sources, packed as they come
	keys, sources bytes.Buffer
	kw            *packed.KeyWriter
	held          []board.Position // keys not yet given to kw (addHeld)
	sw            *packed.SourceWriter
	samples       []byte
	nextSample    int64 // the count at which the next sample is taken
	count         int64
	terminal      int64
	first, last   board.Position
	// the blob's terminal positions, listed beside its backtracking rows
	// (runstore.Store.PutSources): its resolution reads them there
	// instead of testing every position again, and at a ply that keeps
	// rows for those alone (runstore.Ply.TerminalSources) reads no keys
	terminals packed.TerminalList
	list      []byte

	// the position being grouped, and its parents so far
	pending bool
	cur     board.Position
	refs    []packed.Ref
}

// newOutput works out once what every position would otherwise ask for
// again: the blob size and the sampling stride, whose division and
// doublings cost more than packing the positions' sources did (a CPU
// profile of 8x8 ply 12, docs/performance.md).
func newOutput(ctx context.Context, t *task.Task, p *runstore.Ply, bucket int) *output {
	size := int64(t.Run.FinalPositions(p.Ply))
	every := max(1, size/samplesPerRun(p.Buckets, t.Run.Sizes.BucketBlobsAt(p.Ply)))
	return &output{ctx: ctx, t: t, ply: p.Ply, bucket: bucket, size: size, every: every, rec: p}
}

// addAll adds the merged entries es in order, grouping each position's
// parents (add).
func (o *output) addAll(es []Entry) error {
	for _, e := range es {
		if err := o.add(e); err != nil {
			return err
		}
	}
	return nil
}

func (o *output) add(e Entry) error {
	if o.pending && e.Pos == o.cur {
		o.refs = append(o.refs, e.Ref)
		return nil
	}
	if o.pending {
		if err := o.emit(); err != nil {
			return err
		}
	}
	o.pending, o.cur = true, e.Pos
	o.refs = append(o.refs[:0], e.Ref)
	return nil
}

// heldKeys is how many keys the output holds back to give its key
// writer at once (packed.KeyWriter.AddKeys), which takes them at about
// two thirds of the cost of one at a time.
const heldKeys = 1024

// addHeld gives the held keys to the key writer.
func (o *output) addHeld() error {
	err := o.kw.AddKeys(o.held)
	o.held = o.held[:0]
	if err != nil {
		return fmt.Errorf("packing the keys of bucket %d: %w", o.bucket, err)
	}
	return nil
}

// emit adds the pending position to the current blob.
func (o *output) emit() error {
	if o.count == 0 {
		o.first = o.cur
		o.keys.Reset()
		o.sources.Reset()
		o.samples, o.nextSample = nil, 0
		var err error
		if o.kw, err = packed.NewKeyWriter(&o.keys, packed.Options{}); err != nil {
			return err
		}
		if o.sw, err = packed.NewSourceWriter(&o.sources, packed.Options{}); err != nil {
			return err
		}
	}
	if o.held = append(o.held, o.cur); len(o.held) == heldKeys {
		if err := o.addHeld(); err != nil {
			return err
		}
	}
	terminal, known := o.rec.TerminalByRefs(o.refs)
	if !known {
		terminal = o.t.Run.Board.Terminal(o.cur)
	}
	if o.rec.KeepsSources(terminal) {
		if known {
			for i, r := range o.refs {
				o.refs[i] = o.rec.ParentOf(r)
			}
		}
		if err := o.sw.Add(o.refs); err != nil {
			return fmt.Errorf("packing the sources of bucket %d: %w", o.bucket, err)
		}
	}
	// Samples are evenly spaced in a full blob: samplesPerRun of them.
	if o.count == o.nextSample {
		o.samples = o.cur.AppendKey(o.samples)
		o.nextSample += o.every
	}
	if terminal {
		o.terminal++
		o.terminals.Add(o.count, o.cur)
	}
	o.last = o.cur
	o.count++
	if o.count >= o.size {
		return o.flush()
	}
	return nil
}

// flush uploads the current blob and its backtracking rows under the
// attempt's compensation message, which the first blob enqueues (in a
// run of the unnamed forms, runstore.MessagesUnnamed, under a message of
// its own). The deadline is checked before each upload too: once the
// message may have surfaced, its handler may have listed the outputs
// already, and a blob written after that would be no message's.
func (o *output) flush() error {
	if o.count == 0 {
		return nil
	}
	name := runstore.FinalRunBlobName(o.ply, o.bucket, len(o.runs), o.t.Attempt())
	switch {
	case o.t.Run.Messages < runstore.MessagesNamed:
		// A run whose workers may be of releases that know only a
		// message for each blob.
		if err := o.comps.Cover(o.ctx, o.t, o.ply, name); err != nil {
			return err
		}
	case len(o.runs) == 0:
		all := runstore.MergeOutputsName(o.ply, o.bucket, o.t.Attempt())
		if err := o.comps.Cover(o.ctx, o.t, o.ply, all); err != nil {
			return err
		}
	}
	if err := o.comps.Check(); err != nil {
		return err
	}
	if err := o.addHeld(); err != nil {
		return err
	}
	if err := o.kw.Close(); err != nil {
		return err
	}
	if err := o.sw.Close(); err != nil {
		return err
	}
	if err := o.t.Run.Blobs.Upload(o.ctx, name, bytes.NewReader(o.keys.Bytes())); err != nil {
		return fmt.Errorf("writing merge output %s: %w", name, err)
	}
	o.terminals.Count = o.count
	o.list = o.terminals.Append(o.list[:0])
	o.terminals.Reset()
	if err := o.t.Run.Store.PutSources(task.WithCategory(o.ctx, task.CategoryBacktrack), name, o.sources.Bytes(), o.list); err != nil {
		return err
	}
	if err := o.comps.Check(); err != nil {
		return err // no use writing more: this attempt cannot commit
	}
	o.runs = append(o.runs, &runstore.MergedBlob{
		Blob: name, Count: o.count, Min: o.first, Max: o.last, Terminal: o.terminal,
		Samples: o.samples,
	})
	o.count, o.terminal = 0, 0
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

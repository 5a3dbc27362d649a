package task

import (
	"context"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// Run is what every handler of one run shares: its settings, its rows,
// its blobs and its work queue. It is the run of pipeline.Run, seen from
// a handler: the same thing, so the same word (docs/design.md,
// glossary); the handle keeps what handlers must not touch (seeding,
// dropping, the poison queue).
type Run struct {
	Name string
	// Origin holds the board and the start position, which number the
	// plies (Ply).
	message.Origin
	Target int // target ply
	// Sizes size every ply's final blobs, buckets and merge levels.
	Sizes runstore.Sizes
	// Solve says the target ply's positions are solved exactly.
	Solve bool
	// SolvePositions caps positions per final blob at the target ply of a
	// run that solves.
	SolvePositions int
	// SolveMode says how far a run that solves solves its target ply.
	SolveMode runstore.SolveMode
	// Messages is the forms of work message the run's workers send.
	Messages runstore.Messages

	Store *runstore.Store
	Blobs storage.Container
	Work  storage.Queue
	// Compensation is the queue of compensation messages
	// (compensation.Cover), which the workers poll besides Work.
	Compensation storage.Queue
}

// Enqueue sends a work message, visible at once and never expiring.
func (r *Run) Enqueue(ctx context.Context, m message.Message) error {
	return r.EnqueueText(ctx, m.Format(), 0)
}

// EnqueueText sends a work message's text after delay.
func (r *Run) EnqueueText(ctx context.Context, text string, delay time.Duration) error {
	if _, err := r.Work.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1}); err != nil {
		return fmt.Errorf("enqueuing %s: %w", message.Clip(text), err)
	}
	return nil
}

// TerminalSourcesOnly says whether ply keeps backtracking rows for its
// terminal positions only (runstore.Ply.TerminalSources): the target ply
// of a run that does not solve, where the game goes on past every other
// position and no result comes back from it.
func (r *Run) TerminalSourcesOnly(ply int) bool { return !r.Solve && ply == r.Target }

// FinalPositions caps the positions of one final blob of ply: the
// Sizes' BlobPositionsAt, but smaller at the target ply of a run that
// solves, where each final blob is one resolve task that solves its
// positions one after another.
func (r *Run) FinalPositions(ply int) int {
	if r.Solve && ply == r.Target {
		return r.SolvePositions
	}
	return r.Sizes.BlobPositionsAt(ply)
}

// ReadKeys reads a blob of sorted position keys (a final blob, packed)
// and checks that every position fits the run's board.
func (r *Run) ReadKeys(ctx context.Context, blob string) ([]board.Position, error) {
	return r.ReadKeysTo(ctx, blob, nil)
}

// ReadKeysTo is ReadKeys appending to dst: tasks that read a blob each
// reuse one slice, instead of allocating and clearing a blob's positions
// every time.
func (r *Run) ReadKeysTo(ctx context.Context, blob string, dst []board.Position) ([]board.Position, error) {
	data, err := r.Blobs.Get(ctx, blob)
	if err != nil {
		return dst, fmt.Errorf("reading blob %s: %w", blob, err)
	}
	out, err := packed.DecodeKeysTo(dst, data)
	if err != nil {
		return dst, fmt.Errorf("blob %s: %w", blob, err)
	}
	for _, p := range out[len(dst):] {
		if err := r.Board.Valid(p); err != nil {
			return dst, fmt.Errorf("blob %s: %w", blob, err)
		}
	}
	return out, nil
}

// DropIfSwept deletes blob name of a ply that is already Final. A task
// that read the ply while it was open may write one of its working blobs
// (splitters, merge inputs) after the ply's sweep; the blob is then in
// use by nothing, and its writer deletes it as the sweep would have. If
// the ply is still open, the sweep comes later and finds it: a ply not
// yet Final is only ever found so by a read after the write
// (runstore.Store.PlySince). swept reports a deletion.
func (r *Run) DropIfSwept(ctx context.Context, ply int, name string) (swept bool, err error) {
	p, err := r.Store.PlySince(ctx, ply, runstore.Final)
	if err != nil || !p.State.AtLeast(runstore.Final) {
		return false, err
	}
	if err := storage.DeleteBlob(ctx, r.Blobs, name); err != nil {
		return false, fmt.Errorf("deleting %s, written after its ply was swept: %w", name, err)
	}
	return true, nil
}

package task

import (
	"context"
	"errors"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
)

// Item is one item of a ply's stage (runstore.Stage) that a handler's
// delivery does: an expansion task, a combine task, a bucket merge or a
// final blob's resolution. Do carries the sequence every such handler
// follows; the handler supplies the steps that differ.
type Item[M any] struct {
	Stage runstore.Stage[M]
	Index int
	// Ready, when set, checks what the item needs besides its ply's
	// state, before its marker is looked for.
	Ready func(ctx context.Context) error
	// Work does the item: it writes what the marker names, each blob
	// that only the marker makes reachable covered by a compensation
	// message in cover (nil when there is none), and returns the marker;
	// or it returns ErrRequeued, having sent the item's message again.
	Work func(ctx context.Context) (marker M, cover Cover, err error)
	// Won, when set, runs once this attempt's marker won.
	Won func()
	// FollowUp is what comes once the item is done, whoever did it: it
	// is idempotent, since every redelivery of a done item repeats it.
	FollowUp func(ctx context.Context) error
}

// ErrRequeued is what Work returns when, instead of doing its item now,
// it has enqueued the item's message again: the first bucket of a range
// of bucket merges, once it has enqueued the range's other buckets,
// sends itself after them, so that the queue runs a range's merges
// together and the range's inputs can be deleted before the next range
// starts (dedup's treeChildren). The delivery is then done and the item
// is not: Do neither commits nor follows up.
var ErrRequeued = errors.New("task: the item's message was enqueued again, after the tasks it opened")

// Cover is the compensation messages of the blobs a marker names
// (compensation.Set).
type Cover interface {
	// Check refuses a commit once a message may have surfaced and
	// deleted its blob: the early answer, before the commit's fence
	// gives the final one.
	Check() error
	// Done deletes the messages once the marker that names the blobs
	// is committed.
	Done(ctx context.Context)
}

// Do does an item idempotently: a message is delivered at least once,
// and a delivery may die at any point, so every step is one that a
// redelivery finishes or repeats harmlessly:
//
//  1. the ply record says whether the item is worked on now: before its
//     stage the message is bad; after it, a duplicate that only repeats
//     the follow-up;
//  2. a done item (its marker exists) only repeats the follow-up: the
//     delivery that committed it may have died before finishing it;
//  3. the work writes blobs under this attempt's tag, each covered by a
//     compensation message, so a retry writes its own and the message
//     deletes ours unless a marker names it;
//  4. the commit comes only while every compensation message is still
//     hidden (the task's lease keeps them so while it lives), and the
//     marker lands with the attempt's fence: a compensation message
//     that surfaced first added the fence, so a commit that comes too
//     late anyway fails (runstore.ErrFenced) rather than name a blob
//     the message deleted;
//  5. the marker is added once: of two attempts the first wins, the
//     loser's blobs are left to their compensation messages, and the
//     winner deletes its messages;
//  6. the follow-up runs, won or lost.
//
// A Work that returns ErrRequeued has sent the item's message again and
// ends the delivery there.
func Do[M any](ctx context.Context, it Item[M]) error {
	past, err := it.Stage.Check(it.Index)
	switch {
	case err != nil:
		return message.Badf("%v", err)
	case past:
		// Every item is done. The delivery that finished the stage
		// may have died before its follow-up (the expansion that
		// started the merging, before enqueuing the first scan), so a
		// redelivery repeats it; for any other it does nothing.
		return it.FollowUp(ctx)
	}
	if it.Ready != nil {
		if err := it.Ready(ctx); err != nil {
			return err
		}
	}
	done, err := it.Stage.Done(ctx, it.Index)
	if err != nil {
		return err
	}
	if done {
		return it.FollowUp(ctx)
	}
	marker, cover, err := it.Work(ctx)
	switch {
	case errors.Is(err, ErrRequeued):
		return nil
	case err != nil:
		return err
	}
	if cover != nil {
		if err := cover.Check(); err != nil {
			return err
		}
	}
	won, err := it.Stage.Commit(ctx, marker)
	if err != nil {
		return err
	}
	if won {
		if cover != nil {
			cover.Done(ctx)
		}
		if it.Won != nil {
			it.Won()
		}
	}
	return it.FollowUp(ctx)
}

// Items is the handler of the messages that each name one item of a
// stage of their ply (message.Message.Index): it reads the ply's record
// and does the item through Do. Its steps get the record's fixed parts
// (runstore.Store.PlySince): none of them moves the ply.
type Items[M any] struct {
	// Stage is the stage of ply p and the item in it that message index
	// i names: item i of one stage for most kinds (Whole).
	Stage func(s *runstore.Store, p *runstore.Ply, i int) (runstore.Stage[M], int)
	// Ready, Won and FollowUp are Item's, for the message's item; Work
	// does the item that message m names, of ply p.
	Ready    func(ctx context.Context, t *Task, p *runstore.Ply) error
	Work     func(ctx context.Context, t *Task, p *runstore.Ply, m message.Message) (M, Cover, error)
	Won      func(t *Task)
	FollowUp func(ctx context.Context, t *Task, st runstore.Stage[M], i int) error
}

// Whole is Items.Stage for a kind whose message index i is item i of
// stage.
func Whole[M any](stage func(*runstore.Store, *runstore.Ply) runstore.Stage[M]) func(*runstore.Store, *runstore.Ply, int) (runstore.Stage[M], int) {
	return func(s *runstore.Store, p *runstore.Ply, i int) (runstore.Stage[M], int) { return stage(s, p), i }
}

// Handle does the item that m names.
func (h Items[M]) Handle(ctx context.Context, t *Task, m message.Message) error {
	// The record says which stage the item is of (a combine task's
	// level) from its fixed parts alone; whether the ply has reached the
	// stage, a record that the store has seen there says, else a read.
	store := t.Run.Store
	p, err := store.PlySince(ctx, m.Ply, runstore.Expanding)
	if err != nil {
		return err
	}
	st, item := h.Stage(store, p, m.Index)
	if since := st.Since(); !p.State.AtLeast(since) {
		if p, err = store.PlySince(ctx, m.Ply, since); err != nil {
			return err
		}
		st, item = h.Stage(store, p, m.Index)
	}
	it := Item[M]{
		Stage:    st,
		Index:    item,
		Work:     func(ctx context.Context) (M, Cover, error) { return h.Work(ctx, t, p, m) },
		FollowUp: func(ctx context.Context) error { return h.FollowUp(ctx, t, st, m.Index) },
	}
	if h.Ready != nil {
		it.Ready = func(ctx context.Context) error { return h.Ready(ctx, t, p) }
	}
	if h.Won != nil {
		it.Won = func() { h.Won(t) }
	}
	return Do(ctx, it)
}

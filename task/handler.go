package task

import (
	"context"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
)

// Handler handles one kind of work message. Every handler is idempotent:
// a message is delivered at least once, and a delivery may die at any
// point, so a redelivery must finish or repeat the work harmlessly.
//
// An error wrapping message.ErrBadMessage or storage.ErrInvalid means the
// message can never succeed: it goes to the poison queue at once. Any
// other error leaves the message to be retried.
type Handler interface {
	Handle(ctx context.Context, t *Task, m message.Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, t *Task, m message.Message) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, t *Task, m message.Message) error {
	return f(ctx, t, m)
}

// Flow is the flow between plies: what happens when a handler finishes an
// item of a ply's stage, which may complete the stage and so move the ply
// on (runstore/lifecycle.go). Package pipeline implements it.
type Flow interface {
	// Expanded runs after expansion task task, which feeds ply, is done
	// (its marker committed): once every task is done, the ply starts
	// merging.
	Expanded(ctx context.Context, t *Task, ply, task int) error
	// Merged runs when a scan finds that ply p has nothing left to merge,
	// or finds it already Final: it finishes the ply (its merged blobs
	// become its final blobs) and enqueues the next work.
	Merged(ctx context.Context, t *Task, p *runstore.Ply) error
	// Resolved runs after final blob index of ply is resolved: once all
	// are, the ply is resolved and the previous ply's resolution starts.
	Resolved(ctx context.Context, t *Task, ply, index int) error
	// FanOut handles the flow's own messages (message.KindDispatch,
	// message.KindBack): a range of the leaves of a ply's follow-up.
	FanOut(ctx context.Context, t *Task, m message.Message) error
}

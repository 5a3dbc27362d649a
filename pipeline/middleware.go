package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Middleware wraps a handler with what every handler shares.
type Middleware func(task.Handler) task.Handler

// chain applies middleware so that the first is outermost.
func chain(h task.Handler, mws ...Middleware) task.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// errPanic marks a handler that panicked. The message is poisoned: a
// panic is a bug that a retry would only repeat.
var errPanic = errors.New("handler panicked")

// recoverPanics turns a panic into an error carrying the stack, so one
// bad message cannot end the worker loops of the process.
func recoverPanics(next task.Handler) task.Handler {
	return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("%w: %v", errPanic, v)
				t.Log.Error("handler panicked; the message goes to the poison queue", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
		}()
		return next.Handle(ctx, t, m)
	})
}

// billByKind bills a task's storage calls to the category of its kind
// and to its message's ply.
func billByKind(next task.Handler) task.Handler {
	return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
		ctx = storage.WithPly(task.WithCategory(ctx, task.CategoryOf(m.Kind)), m.Ply)
		return next.Handle(ctx, t, m)
	})
}

// checkPly refuses messages for plies the run cannot have. Every message
// names a ply whose record exists before the message is sent, so a
// missing record never heals on retry.
func checkPly(next task.Handler) task.Handler {
	return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
		if m.Ply > t.Run.Target {
			return message.Badf("ply %d is past the run's target ply %d", m.Ply, t.Run.Target)
		}
		err := next.Handle(ctx, t, m)
		if errors.Is(err, runstore.ErrNoPly) && !errors.Is(err, message.ErrBadMessage) {
			return message.Badf("%v", err)
		}
		return err
	})
}

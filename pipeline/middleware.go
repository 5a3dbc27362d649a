package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

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

// retryThrottled runs a handler again, up to retries times (none when
// retries is not positive, as NoThrottleRetries), when storage
// throttled it (storage.ErrThrottled: the account, a queue or a partition
// over its rate, through the backend's own retries). Each rerun waits
// first, delay for the first and twice as long for each later one, drawn
// from [d/2, 3d/2) so that workers throttled together spread out. The
// message stays leased meanwhile (HoldLease renews it), so neither its
// dequeue count, which MaxDequeue bounds for tasks that fail on their
// own, nor its ownership of follow-ups (task.Owner) changes, and a
// throttled fleet slows down instead of poisoning its messages. Handlers
// are idempotent, so a rerun from the start is safe.
func retryThrottled(retries int, delay time.Duration) Middleware {
	return func(next task.Handler) task.Handler {
		return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
			d := delay
			for try := 0; ; try++ {
				err := next.Handle(ctx, t, m)
				if try >= retries || !errors.Is(err, storage.ErrThrottled) {
					return err
				}
				wait := d/2 + rand.N(d+1)
				t.Log.Info("storage throttled the task; running it again", "wait", wait, "try", try+1, "err", err)
				if serr := storage.Sleep(ctx, wait); serr != nil {
					return err
				}
				d *= 2
			}
		})
	}
}

// billByKind bills a task's storage calls to the category of its kind
// and to its message's ply.
func billByKind(next task.Handler) task.Handler {
	return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
		ctx = storage.WithPly(task.WithCategory(ctx, task.CategoryOf(m.Kind)), m.Ply)
		return next.Handle(ctx, t, m)
	})
}

// labelProfile labels the handler's goroutine, and the goroutines it
// starts, with its message's kind and ply, so that a CPU profile of a
// run (-cpuprofile) tells the stages and plies apart: go tool pprof
// -tags gives the time of each kind and each ply, and -tagfocus
// kind=merge (or ply=12) keeps one. An expansion's ply is its parents'.
func labelProfile(next task.Handler) task.Handler {
	return task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) (err error) {
		pprof.Do(ctx, pprof.Labels("kind", m.Kind.String(), "ply", strconv.Itoa(m.Ply)), func(ctx context.Context) {
			err = next.Handle(ctx, t, m)
		})
		return err
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

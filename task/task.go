package task

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// Timing is the worker's timing that handlers must respect.
type Timing struct {
	// Visibility is the queue visibility timeout; the lease renews it.
	Visibility time.Duration
	// CompensationDelay is how long a compensation message stays hidden.
	CompensationDelay time.Duration
}

// Task is one delivery of one message being handled.
type Task struct {
	Run      *Run
	Msg      storage.Message
	Timing   Timing
	Log      *slog.Logger
	Progress *Progress
	Flow     Flow
	// Now is the clock of the task's deadlines (compensation.Cover):
	// the worker's, time.Now unless a test sets another.
	Now func() time.Time
	// Hold, when set, has the task's lease keep h hidden along with the
	// task's message until the task ends (pipeline.Lease.Hold): so the
	// compensation messages of a task that runs long never surface
	// while it lives, and those of a task that died surface within
	// their delay.
	Hold func(h Hidden)
}

// Hidden is a message that a task keeps hidden while it runs, besides
// its own: the compensation message of a blob it wrote
// (compensation.Pending).
type Hidden interface {
	// Renew hides the message again for its delay once it is due.
	Renew(ctx context.Context)
}

// Owner names the task's message, the same on every redelivery: the
// owner recorded by a transition, whose redelivery finishes the follow-up.
func (t *Task) Owner() string { return tag(t.Msg.ID, 0) }

// Claim is the task's claim on a follow-up it owes: its Owner, with a
// lease of one visibility timeout from now (runstore.Claim). A
// redelivery of the message owns the follow-up still, lease or not;
// anyone else takes it over only once the lease has run out.
func (t *Task) Claim() runstore.Claim {
	now := t.Now()
	return runstore.Claim{Owner: t.Owner(), Now: now, Until: now.Add(t.Timing.Visibility)}
}

// Attempt names this delivery; every delivery has its own, even of two
// copies of one message. Blobs that a compensation message covers carry
// it in their names: the message of an attempt that died may surface
// while a retry of the same task runs, and must then only ever delete
// the dead attempt's blob, never the one the retry is about to make live.
func (t *Task) Attempt() string { return tag(t.Msg.ID, t.Msg.DequeueCount) }

// tag is a short, key-safe name derived from a message id and, when not
// zero, the delivery count.
func tag(msgID string, delivery int64) string {
	h := sha256.Sum256([]byte(msgID))
	s := hex.EncodeToString(h[:8])
	if delivery == 0 {
		return s
	}
	return s + "-" + strconv.FormatInt(delivery, 10)
}

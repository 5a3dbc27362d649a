package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Progress counts work done by the worker loops of one process.
type Progress = task.Progress

// Worker pulls a run's messages and handles them, one at a time.
type Worker struct {
	run      *Run
	cfg      WorkerConfig
	log      *slog.Logger
	progress *Progress
	handler  task.Handler

	compensationPolled time.Time // see pollCompensation
	handled            time.Time // when the last handling ended; see finished

	stopping context.Context    // done once Stop is called
	stop     context.CancelFunc // Stop
}

// NewWorker checks the configuration and makes a worker for an open run.
func NewWorker(r *Run, cfg WorkerConfig, log *slog.Logger, progress *Progress) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if progress == nil {
		progress = &Progress{}
	}
	w := &Worker{run: r, cfg: cfg, log: log.With("run", r.Config.Name), progress: progress}
	w.stopping, w.stop = context.WithCancel(context.Background())
	w.handler = chain(task.HandlerFunc(route), recoverPanics, retryThrottled(cfg.ThrottleRetries, cfg.ThrottleDelay), billByKind, labelProfile, checkPly)
	return w, nil
}

// Run handles messages until ctx is cancelled, Stop is called or, with
// ExitWhenDone, the run is complete. A message being handled when ctx is
// cancelled is abandoned and made visible again at once; every handler
// is idempotent. After Stop, Run takes no more messages and returns once
// the one it is handling, if any, is settled.
//
// It takes the work queue's messages first and polls the compensation
// queue when a poll of the work queue finds none, and once a visibility
// timeout besides (pollCompensation). A poll of a sharded work queue
// asks only some shards (shardedqueue): finding none, the loop backs off
// as from an empty queue, and a later poll, its own or another loop's,
// asks the other shards. Nothing here takes an empty poll for an empty
// queue: the stall and drain checks count the queues. A run seeded before the
// compensation queue existed gets it here; the compensation messages
// its work queue still holds are handled there as any message. (Such a
// run has one compensation queue; the seed made the shards of runs that
// have several.)
func (w *Worker) Run(ctx context.Context) {
	ctx = task.WithCategory(ctx, task.CategoryControl)
	// A dequeue that returns a message is that message's ply's work, as
	// the plan counts it; the polls that find nothing are no ply's.
	origin := w.run.shared.Origin
	ctx = storage.WithPlyOfMessage(ctx, func(text string) (int, bool) {
		m, err := message.ParseMessage(origin, text)
		return m.Ply, err == nil
	})
	if w.run.Config.CompensationShards <= 1 {
		if err := w.run.compensation.Create(ctx); err != nil {
			w.log.Warn("creating the compensation queue failed; tasks that write blobs fail until it exists", "err", err)
		}
	}
	// waiting is ctx, also done soon after Stop is called, for the
	// loop's back-off; whether to take a message is asked of ctx and
	// w.stopping themselves, which Stop cancels before it returns.
	waiting, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	defer context.AfterFunc(w.stopping, stopWaiting)()
	idle := w.cfg.PollMin
	for ctx.Err() == nil && w.stopping.Err() == nil {
		if w.pollCompensation(ctx, w.cfg.Visibility) {
			continue
		}
		msgs, err := w.run.work.Dequeue(ctx, 1, w.cfg.Visibility)
		switch {
		case ctx.Err() != nil:
			return
		case len(msgs) > 0 && w.stopping.Err() != nil:
			// Stopped while dequeuing: the message goes back untouched.
			w.giveBack(w.log, w.run.work, msgs[0])
			return
		case err != nil:
			w.log.Warn("dequeue failed; backing off", "err", err)
		case len(msgs) == 0:
			if w.pollCompensation(ctx, 0) {
				idle = w.cfg.PollMin
				continue
			}
			w.nudgeIfStalled(ctx)
			if w.cfg.ExitWhenDone && w.finished(ctx) {
				return
			}
		default:
			idle = w.cfg.PollMin
			w.handle(ctx, w.run.work, msgs[0])
			continue
		}
		sleep(waiting, idle)
		idle = min(2*idle, w.cfg.PollMax)
	}
}

// Stop makes Run take no more messages and return once the message it is
// handling, if any, is settled: a worker told to go (a scale-in's
// SIGTERM) finishes its task rather than give it back, since a long
// merge given back is a merge done twice. Cancelling Run's context still
// abandons the handling at once. Stop may be called more than once, from
// any goroutine.
func (w *Worker) Stop() { w.stop() }

// pollCompensation handles one message of the compensation queue, if
// the queue was last polled every longer ago and one is visible, and
// reports whether it did. Polled only when the work queue is empty
// (every 0) and once a visibility timeout, it costs a busy fleet one
// request a worker a minute, and the blobs of a task that died still
// go within about their delay. The poll is control, as the work queue's
// is (it belongs to no ply); the handling of what it finds is billed
// as compensation by the middleware, as on the work queue.
func (w *Worker) pollCompensation(ctx context.Context, every time.Duration) bool {
	if every > 0 && time.Since(w.compensationPolled) < every {
		return false
	}
	w.compensationPolled = time.Now()
	msgs, err := w.run.compensation.Dequeue(ctx, 1, w.cfg.Visibility)
	if err != nil || len(msgs) == 0 {
		return false
	}
	if w.stopping.Err() != nil {
		w.giveBack(w.log, w.run.compensation, msgs[0])
		return false
	}
	w.handle(ctx, w.run.compensation, msgs[0])
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// finished reports whether the run is complete and, with Drain, its work
// and compensation queues empty.
func (w *Worker) finished(ctx context.Context) bool {
	if !w.run.seenDone(ctx) {
		return false
	}
	return !w.cfg.Drain || w.run.drained(ctx, w.log, w.handled)
}

// handle runs one message of queue q through the handler chain under
// its lease and settles it: deleted when done, poisoned when it can never
// succeed, released at once when the worker stops, left to reappear
// otherwise.
func (w *Worker) handle(ctx context.Context, q storage.Queue, msg storage.Message) {
	kind := kindOf(msg.Text)
	log := w.log.With("msg_id", msg.ID, "kind", kind, "ply", plyOf(msg.Text), "dequeue_count", msg.DequeueCount)
	start := time.Now()
	outcome := w.settle(ctx, log, q, msg)
	w.handled = time.Now()
	if w.cfg.Observer != nil {
		w.cfg.Observer.TaskDone(kind, outcome, time.Since(start))
	}
}

func (w *Worker) settle(ctx context.Context, log *slog.Logger, q storage.Queue, msg storage.Message) string {
	if msg.DequeueCount > w.cfg.MaxDequeue {
		return w.toPoison(ctx, log, q, msg, fmt.Sprintf("dequeued %d times, more than the limit of %d", msg.DequeueCount, w.cfg.MaxDequeue))
	}
	m, err := message.ParseMessage(w.run.shared.Origin, msg.Text)
	if err != nil {
		return w.toPoison(ctx, log, q, msg, err.Error())
	}
	w.progress.Started(m)
	// The message's delete and lease renewals are its ply's work too,
	// and this handling's, with every rerun of its handler.
	ctx = storage.WithHandling(ctx, m.Ply, m.Kind.String())
	lease, taskCtx := HoldLease(ctx, q, msg, w.cfg.Visibility, w.cfg.Clock)
	t := &task.Task{Run: w.run.shared, Msg: msg, Timing: w.cfg.timing(), Log: log, Progress: w.progress, Flow: flow{w.run}, Now: w.cfg.Clock.Now, Hold: lease.Hold}
	err = w.handler.Handle(taskCtx, t, m)
	receipt, lost := lease.Release()
	msg.PopReceipt = receipt
	switch {
	case err == nil:
		w.progress.Tasks.Add(1)
		w.deleteDone(ctx, log, q, msg.ID, receipt)
		log.Debug("task done")
		return OutcomeOK
	case errors.Is(err, message.ErrBadMessage), errors.Is(err, storage.ErrInvalid), errors.Is(err, errPanic):
		return w.toPoison(context.WithoutCancel(ctx), log, q, msg, err.Error())
	case lost:
		return OutcomeLeaseLost
	case ctx.Err() != nil:
		w.giveBack(log, q, msg)
		return OutcomeCancelled
	case errors.Is(err, storage.ErrThrottled):
		log.Warn("storage throttled the task through its retries; the message will be retried", "err", err)
		return OutcomeThrottled
	default:
		log.Warn("task failed; the message will be retried", "err", err)
		return OutcomeFailed
	}
}

// deleteDone deletes a message whose handling succeeded. The worker may
// have been told to stop (ctx cancelled) after the handler returned: the
// work is done all the same, so the delete goes ahead rather than leave
// the message to reappear and be done again. It is given one visibility
// timeout, past which the receipt is stale and the delete would fail
// anyway (and a stopping worker's grace period may end it sooner).
func (w *Worker) deleteDone(ctx context.Context, log *slog.Logger, q storage.Queue, id, receipt string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.Visibility)
	defer cancel()
	if err := q.Delete(ctx, id, receipt); err != nil {
		log.Warn("deleting a handled message failed; a redelivery will find the work done", "err", err)
	}
}

// giveBack makes an abandoned message visible again at once, so another
// worker takes it up without waiting out its visibility timeout.
func (w *Worker) giveBack(log *slog.Logger, q storage.Queue, msg storage.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := q.UpdateVisibility(task.WithCategory(ctx, task.CategoryControl), msg.ID, msg.PopReceipt, 0); err != nil {
		log.Warn("could not give the abandoned message back; it reappears after its visibility timeout", "err", err)
	}
}

func kindOf(text string) string {
	if text == "" {
		return "empty"
	}
	return message.Kind(text[0]).String()
}

// poisonRecord is what the poison queue holds for each rejected message.
type poisonRecord struct {
	ID           string `json:"id"`
	DequeueCount int64  `json:"dequeue_count"`
	Reason       string `json:"reason"`
	Text         string `json:"text"`
}

// toPoison moves a message to the poison queue with its reason, then
// deletes it. A crash in between leaves a copy in both queues; the next
// delivery poisons it again, so the poison queue may hold a duplicate but
// no message is lost. It returns the outcome.
func (w *Worker) toPoison(ctx context.Context, log *slog.Logger, q storage.Queue, msg storage.Message, reason string) string {
	text := msg.Text
	if len(text) > 40000 {
		text = text[:40000] + "...(truncated)"
	}
	b, _ := json.Marshal(poisonRecord{ID: msg.ID, DequeueCount: msg.DequeueCount, Reason: reason, Text: text})
	if len(b) > storage.MaxMessageBytes {
		b, _ = json.Marshal(poisonRecord{ID: msg.ID, DequeueCount: msg.DequeueCount, Reason: reason, Text: "(not kept: too long)"})
	}
	if _, err := w.run.poison.Enqueue(ctx, string(b), storage.EnqueueOptions{TTL: -1}); err != nil {
		log.Error("moving a message to the poison queue failed", "err", err)
		return OutcomeFailed
	}
	w.progress.Poisoned.Add(1)
	log.Error("message moved to the poison queue", "reason", reason)
	if err := q.Delete(ctx, msg.ID, msg.PopReceipt); err != nil {
		log.Warn("deleting a poisoned message failed", "err", err)
	}
	return OutcomePoison
}

// doneEvery is how often, at most, the worker loops of one process read
// whether the run is complete, and once it is, count its queues. Every
// loop asks after each empty poll: hundreds of loops reading the one
// Done row each time would take more than its table partition serves
// (2,000 entities a second) and throttle the run's own transitions, and
// counting the queues asks every shard of the work queue.
const doneEvery = time.Second

// seenDone reports whether the run is complete, reading its Done row
// for the whole process at most once per doneEvery; once complete, a run
// stays so.
func (r *Run) seenDone(ctx context.Context) bool {
	if r.doneSeen.Load() {
		return true
	}
	if !r.doneRead.open(doneEvery) {
		return false
	}
	if d, err := r.Done(ctx); err == nil && d != nil {
		r.doneSeen.Store(true)
	}
	return r.doneSeen.Load()
}

// drained reports whether the run's queues held no message, visible or
// delayed, when counted after since: the loops of a process count them
// at most once per doneEvery between them, and each asks with since
// the end of its own last handling, which may have enqueued a
// compensation message that an earlier count did not see.
func (r *Run) drained(ctx context.Context, log *slog.Logger, since time.Time) bool {
	if r.queuesRead.open(doneEvery) {
		start := time.Now()
		n, err := r.Queued(ctx)
		if err == nil {
			r.counted(start, n == 0)
		}
		if n > 0 && !r.drainLogged.Swap(true) {
			log.Info("run complete; waiting for delayed compensation messages before exiting", "messages", n)
		}
	}
	r.count.Lock()
	defer r.count.Unlock()
	return r.count.empty && r.count.at.After(since)
}

// counted records a count of the queues that began at start, unless a
// later one is recorded already.
func (r *Run) counted(start time.Time, empty bool) {
	r.count.Lock()
	defer r.count.Unlock()
	if start.After(r.count.at) {
		r.count.at, r.count.empty = start, empty
	}
}

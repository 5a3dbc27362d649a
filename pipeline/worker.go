package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/storage"
)

// Progress counts work done by the worker loops of one process.
type Progress struct {
	Tasks     atomic.Int64
	Positions atomic.Int64
	Edges     atomic.Int64
	Merges    atomic.Int64
	Poisoned  atomic.Int64
	current   atomic.Value // string: what the latest task was doing
}

// Current says what the latest task was doing, such as "expanding ply 7".
func (p *Progress) Current() string {
	s, _ := p.current.Load().(string)
	return s
}

func (p *Progress) setCurrent(m Message) {
	verb := map[Kind]string{KindInline: "expanding", KindChunk: "expanding", KindScan: "merging", KindMerge: "merging", KindResolve: "resolving", KindCompensation: "cleaning"}[m.Kind]
	p.current.Store(fmt.Sprintf("%s ply %d", verb, m.Ply))
}

// Add counts positions expanded and edges found.
func (p *Progress) Add(positions, edges int64) {
	p.Positions.Add(positions)
	p.Edges.Add(edges)
}

// Worker pulls a run's messages and handles them.
type Worker struct {
	run      *Run
	cfg      WorkerConfig
	log      *slog.Logger
	progress *Progress

	stallChecked time.Time // see nudgeIfStalled
	drainLogged  bool      // see finished
}

// finished reports whether the run is complete and, with Drain, its work
// queue empty.
func (w *Worker) finished(ctx context.Context) bool {
	done, err := w.run.Done(ctx)
	if err != nil || done == nil {
		return false
	}
	if !w.cfg.Drain {
		return true
	}
	n, err := w.run.work.ApproximateLength(ctx)
	if err != nil {
		return false
	}
	if n > 0 && !w.drainLogged {
		w.drainLogged = true
		w.log.Info("run complete; waiting for delayed compensation messages before exiting", "messages", n)
	}
	return n == 0
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
	return &Worker{run: r, cfg: cfg, log: log.With("run", r.Config.Name), progress: progress}, nil
}

// Run handles messages until ctx is cancelled or, with ExitWhenDone, the
// run is complete. A message being handled when ctx is cancelled is
// abandoned: it reappears after its visibility timeout, and every handler
// is idempotent.
func (w *Worker) Run(ctx context.Context) error {
	ctx = withCategory(ctx, CategoryControl)
	idle := w.cfg.PollMin
	for {
		if ctx.Err() != nil {
			return nil
		}
		msgs, err := w.run.work.Dequeue(ctx, 1, w.cfg.Visibility)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.log.Warn("dequeue failed; backing off", "err", err)
			sleep(ctx, idle)
			idle = min(2*idle, w.cfg.PollMax)
			continue
		}
		if len(msgs) == 0 {
			w.nudgeIfStalled(ctx)
			if w.cfg.ExitWhenDone && w.finished(ctx) {
				return nil
			}
			sleep(ctx, idle)
			idle = min(2*idle, w.cfg.PollMax)
			continue
		}
		idle = w.cfg.PollMin
		w.handle(ctx, msgs[0])
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// lease keeps a message hidden while its task runs, and cancels the task
// when the message has been taken over (ErrLeaseLost).
type lease struct {
	mu      sync.Mutex
	receipt string
	lost    bool
}

func (w *Worker) handle(ctx context.Context, msg storage.Message) {
	kind := kindOf(msg.Text)
	log := w.log.With("msg_id", msg.ID, "kind", kind, "ply", plyOf(msg.Text), "dequeue_count", msg.DequeueCount)
	start := time.Now()
	outcome := OutcomeFailed
	if w.cfg.Observer != nil {
		defer func() { w.cfg.Observer.TaskDone(kind, outcome, time.Since(start)) }()
	}
	if msg.DequeueCount > w.cfg.MaxDequeue {
		if w.toPoison(ctx, log, msg, fmt.Sprintf("dequeued %d times, more than the limit of %d", msg.DequeueCount, w.cfg.MaxDequeue)) {
			outcome = OutcomePoison
		}
		return
	}
	m, err := ParseMessage(w.run.Board, msg.Text)
	if err != nil {
		if w.toPoison(ctx, log, msg, err.Error()) {
			outcome = OutcomePoison
		}
		return
	}
	w.progress.setCurrent(m)
	// The lease, the task and the final delete are all costs of this kind
	// of work; polling and poisoning stay under control.
	ctrl := ctx
	ctx = withCategory(ctx, categoryOf(m.Kind))

	taskCtx, cancel := context.WithCancel(ctx)
	l := &lease{receipt: msg.PopReceipt}
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		tick := time.NewTicker(w.cfg.Visibility / 3)
		defer tick.Stop()
		for {
			select {
			case <-taskCtx.Done():
				return
			case <-tick.C:
				l.mu.Lock()
				rc, err := w.run.work.UpdateVisibility(taskCtx, msg.ID, l.receipt, w.cfg.Visibility)
				if err == nil {
					l.receipt = rc
				} else if errors.Is(err, storage.ErrLeaseLost) || errors.Is(err, storage.ErrNotFound) {
					l.lost = true
					l.mu.Unlock()
					log.Warn("lease lost; abandoning the task before it commits")
					cancel()
					return
				}
				l.mu.Unlock()
			}
		}
	}()
	t := &task{run: w.run, log: log, cfg: w.cfg, msg: msg, progress: w.progress, merges: &w.progress.Merges}
	err = t.handle(taskCtx, m)
	cancel()
	<-hbDone
	switch {
	case errors.Is(err, ErrBadMessage):
		if w.toPoison(ctrl, log, msg, err.Error()) {
			outcome = OutcomePoison
		}
	case err != nil:
		switch {
		case l.lost:
			outcome = OutcomeLeaseLost
		case ctx.Err() != nil:
			outcome = OutcomeCancelled
		default:
			log.Warn("task failed; the message will be retried", "err", err, "seconds", time.Since(start).Seconds())
		}
	default:
		outcome = OutcomeOK
		w.progress.Tasks.Add(1)
		if err := w.run.work.Delete(ctx, msg.ID, l.receipt); err != nil && ctx.Err() == nil {
			log.Warn("deleting a handled message failed; a redelivery will find the work done", "err", err)
		}
		log.Debug("task done", "seconds", time.Since(start).Seconds())
	}
}

func kindOf(text string) string {
	if text == "" {
		return "empty"
	}
	return Kind(text[0]).String()
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
// no message is lost. It reports whether the message reached the poison
// queue.
func (w *Worker) toPoison(ctx context.Context, log *slog.Logger, msg storage.Message, reason string) bool {
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
		return false
	}
	w.progress.Poisoned.Add(1)
	log.Error("message moved to the poison queue", "reason", reason)
	if err := w.run.work.Delete(ctx, msg.ID, msg.PopReceipt); err != nil {
		log.Warn("deleting a poisoned message failed", "err", err)
	}
	return true
}

// task is one message being handled.
type task struct {
	run      *Run
	log      *slog.Logger
	cfg      WorkerConfig
	msg      storage.Message
	progress *Progress
	merges   *atomic.Int64
}

func (t *task) handle(ctx context.Context, m Message) error {
	if m.Ply > t.run.Config.Target {
		return badf("ply %d is past the run's target ply %d", m.Ply, t.run.Config.Target)
	}
	err := t.handleKind(ctx, m)
	if errors.Is(err, errNoPly) && !errors.Is(err, ErrBadMessage) {
		// Every message names a ply whose record exists before the
		// message is sent, so a missing one never heals on retry.
		return badf("%v", err)
	}
	return err
}

func (t *task) handleKind(ctx context.Context, m Message) error {
	switch m.Kind {
	case KindInline, KindChunk:
		return t.expand(ctx, m)
	case KindScan:
		return t.scan(ctx, m)
	case KindMerge:
		return t.merge(ctx, m)
	case KindResolve:
		return t.resolve(ctx, m)
	case KindCompensation:
		return t.compensateHandle(ctx, m)
	}
	return badf("unhandled kind %q", m.Kind)
}

// attemptTag names this delivery of the task's message; every delivery
// has its own, even of two copies of one message. Blobs that a
// compensation message covers carry it in their names: the message of an
// attempt that died may surface while a retry of the same task runs, and
// must then only ever delete the dead attempt's blob, never the one the
// retry is about to make live.
func (t *task) attemptTag() string { return claimID(t.msg.ID, t.msg.DequeueCount) }

// pendingComp is a compensation message covering one blob being written.
type pendingComp struct{ p *compensation.Pending }

func (t *task) compensate(ctx context.Context, ply int, blob string) (*pendingComp, error) {
	p, err := compensation.Enqueue(ctx, t.run.work, Message{Kind: KindCompensation, Ply: ply, Blob: blob}.Format(), t.cfg.CompensationDelay, t.cfg.Visibility)
	if err != nil {
		return nil, err
	}
	return &pendingComp{p}, nil
}

func (c *pendingComp) check() error { return c.p.Check() }

func (c *pendingComp) done(ctx context.Context) { _ = c.p.Done(ctx) }

// compensateHandle runs when a compensation message surfaces. A blob is
// live if the ply is complete and lists it (or it holds results), or the
// ply is still open and a run record names it. Backtracking rows of a
// deleted final blob go with it.
//
// Crash points: deleting the blob and then its rows are idempotent, and
// the message is deleted last, so a redelivery repeats them.
func (t *task) compensateHandle(ctx context.Context, m Message) error {
	r := t.run
	live := func(ctx context.Context) (bool, error) {
		if isResultBlob(m.Blob) {
			return true, nil
		}
		ply, err := r.getPly(ctx, m.Ply)
		if errors.Is(err, storage.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if ply.State == plyComplete {
			for _, b := range ply.Blobs {
				if b == m.Blob {
					return true, nil
				}
			}
			return false, nil
		}
		recs, err := r.listRecords(ctx, m.Ply)
		if err != nil {
			return false, err
		}
		for _, rr := range recs {
			if rr.Blob == m.Blob {
				return true, nil
			}
		}
		return false, nil
	}
	cleanup := func(ctx context.Context) error {
		pk := backPartition(m.Blob)
		es, err := queryAll(ctx, r.back, pk, "", "")
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := r.back.Delete(ctx, pk, e.RowKey, storage.AnyETag); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
		}
		return nil
	}
	_, err := compensation.Handle(ctx, r.blobs, m.Blob, live, cleanup)
	return err
}

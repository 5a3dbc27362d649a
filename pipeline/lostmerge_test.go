package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// lostBackend interferes with the first merge message of one ply: it
// loses it (never enqueued, kept in lost) or delivers it as if it had
// been dequeued too often (poisoned). It can hold back the commit of a
// late attempt of the lost merge until another attempt has committed the
// same bucket.
type lostBackend struct {
	storage.Backend
	ply    int
	poison bool
	late   string // the attempt tag of the late merge
	// merges tells the ply's bucket markers from other rows.
	merges runstore.Stage[runstore.BucketMerge]

	mu       sync.Mutex
	lost     string
	poisoned bool
	gotLost  chan struct{}
	redone   chan struct{} // another attempt committed the lost bucket
	redoOnce sync.Once
}

func newLostBackend(t *testing.T, be storage.Backend, cfg RunConfig, ply int, poison bool, late string) *lostBackend {
	r, err := newRun(be, cfg.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	// MarkerOf reads only the ply's number of the record.
	merges := r.store.MergeStage(&runstore.Ply{Ply: ply})
	return &lostBackend{Backend: be, ply: ply, poison: poison, late: late, merges: merges,
		gotLost: make(chan struct{}), redone: make(chan struct{})}
}

func (b *lostBackend) Queue(name string) storage.Queue {
	return onWork(name, b.Backend.Queue(name), func(q storage.Queue) storage.Queue { return lostQueue{q, b} })
}

// onWork is wrap(q) if name is a run's work queue, else q.
func onWork(name string, q storage.Queue, wrap func(storage.Queue) storage.Queue) storage.Queue {
	if strings.HasSuffix(name, "-work") {
		return wrap(q)
	}
	return q
}

func (b *lostBackend) Table(name string) storage.Table {
	t := b.Backend.Table(name)
	if strings.HasSuffix(name, "state") {
		return lostTable{t, b}
	}
	return t
}

func (b *lostBackend) isTarget(text string) bool {
	return strings.HasPrefix(text, fmt.Sprintf("M%02d-", b.ply))
}

type lostQueue struct {
	storage.Queue
	b *lostBackend
}

func (q lostQueue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	b := q.b
	if !b.poison && b.isTarget(text) {
		b.mu.Lock()
		first := b.lost == ""
		if first {
			b.lost = text
		}
		b.mu.Unlock()
		if first {
			close(b.gotLost)
			return storage.Receipt{ID: "lost"}, nil
		}
	}
	return q.Queue.Enqueue(ctx, text, opts)
}

func (q lostQueue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	msgs, err := q.Queue.Dequeue(ctx, max, visibility)
	b := q.b
	for i := range msgs {
		if b.poison && b.isTarget(msgs[i].Text) {
			b.mu.Lock()
			if !b.poisoned {
				b.poisoned = true
				msgs[i].DequeueCount = 99
			}
			b.mu.Unlock()
		}
	}
	return msgs, err
}

type lostTable struct {
	storage.Table
	b *lostBackend
}

// Add and Transact order the commits of the lost bucket: the late
// attempt's marker (added with its fence, in a transaction) waits until
// another attempt's marker is in.
func (t lostTable) Add(ctx context.Context, e storage.Entity) (etag string, err error) {
	err = t.b.order(ctx, []storage.Op{{Kind: storage.OpAdd, Entity: e}}, func() error {
		etag, err = t.Table.Add(ctx, e)
		return err
	})
	return etag, err
}

func (t lostTable) Transact(ctx context.Context, pk string, ops []storage.Op) (etags []string, err error) {
	err = t.b.order(ctx, ops, func() error {
		etags, err = t.Table.Transact(ctx, pk, ops)
		return err
	})
	return etags, err
}

// order runs write, which adds ops: after another attempt's marker of
// the lost bucket when ops add the late attempt's.
func (b *lostBackend) order(ctx context.Context, ops []storage.Op, write func() error) error {
	b.mu.Lock()
	lost := b.lost
	b.mu.Unlock()
	bucket, _ := strconv.Atoi(strings.TrimPrefix(lost, fmt.Sprintf("M%02d-", b.ply)))
	target := false
	for _, op := range ops {
		item, marker := b.merges.MarkerOf(op.Entity)
		if op.Kind != storage.OpAdd || !marker || lost == "" || item != bucket {
			continue
		}
		target = true
		if op.Entity.Props["Attempt"] == b.late {
			if err := wait(ctx, b.redone); err != nil {
				return err
			}
		}
	}
	err := write()
	if target && err == nil {
		b.redoOnce.Do(func() { close(b.redone) })
	}
	return err
}

func wait(ctx context.Context, c chan struct{}) error {
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle runs a worker until the work and compensation queues are
// empty, so that delayed compensation messages are handled.
func settle(t *testing.T, ctx context.Context, r *Run, wcfg WorkerConfig) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	w, err := NewWorker(r, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	for {
		n, err := r.Queued(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		sleep(ctx, 100*time.Millisecond)
		if ctx.Err() != nil {
			t.Fatal("the queues did not empty in time")
		}
	}
	cancel()
	<-done
}

// TestLostMergeIsRedone loses or poisons a merge message, and checks that
// the run still completes exactly: idle workers see an empty queue in an
// incomplete run and nudge a scan, which enqueues the merge of the bucket
// again. In the lost case the lost merge runs all the same, late, as if
// its message had been delivered after all: it reads its inputs and
// writes its outputs, but its commit comes after the redone merge's, so
// it must find the bucket merged and leave nothing behind (its rows
// dropped, its compensation messages deleting its blobs).
func TestLostMergeIsRedone(t *testing.T) {
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, PollMax: 50 * time.Millisecond}
	for _, poison := range []bool{false, true} {
		name := map[bool]string{false: "lost and late", true: "poisoned"}[poison]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			lateMsg := storage.Message{ID: "late"}
			late := (&task.Task{Msg: lateMsg}).Attempt()
			cfg := RunConfig{Name: "lost", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 1}}}
			be := newLostBackend(t, teststore.Embedded(t), cfg, 7, poison, late)
			start := time.Now()
			var oldMerge atomic.Value
			oldDone := make(chan struct{})
			if !poison {
				go func() {
					defer close(oldDone)
					if wait(ctx, be.gotLost) != nil {
						return
					}
					r, err := OpenRun(ctx, be, cfg.Name)
					if err != nil {
						oldMerge.Store(err)
						return
					}
					m, err := message.ParseMessage(r.shared.Origin, be.lost)
					if err != nil {
						oldMerge.Store(err)
						return
					}
					// A longer compensation delay than the workers': its
					// commit deadline must not pass while it waits.
					ocfg := wcfg
					ocfg.CompensationDelay = 10 * time.Second
					old := &task.Task{Run: r.shared, Msg: lateMsg, Timing: ocfg.WithDefaults().timing(),
						Log: testLogger(t), Progress: &Progress{}, Flow: flow{r}, Now: time.Now}
					if err := handlers[m.Kind].Handle(ctx, old, m); err != nil {
						oldMerge.Store(err)
					}
				}()
			} else {
				close(oldDone)
			}
			rep, err := RunLocal(ctx, be, cfg, 3, wcfg, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("run complete after %s", time.Since(start))
			<-oldDone
			checkReport4x4(t, rep, cfg.Target)
			r, err := OpenRun(ctx, be, cfg.Name)
			if err != nil {
				t.Fatal(err)
			}
			settle(t, ctx, r, wcfg)
			t.Logf("settled after %s", time.Since(start))
			got, _ := auditLines(t, ctx, r)
			var want []string
			if poison {
				if !be.poisoned {
					t.Fatal("no merge message of ply 7 was poisoned")
				}
				want = []string{fmt.Sprintf("error: poison queue: message %q: dequeued 99 times, more than the limit of 5", firstPoisonText(t, ctx, r))}
			} else {
				if err, _ := oldMerge.Load().(error); err != nil {
					t.Errorf("the late merge: %v; want it to find the bucket merged and finish quietly", err)
				}
				select {
				case <-be.redone:
				default:
					t.Error("the lost bucket was never merged")
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("audit %q, want %q", got, want)
			}
		})
	}
}

func firstPoisonText(t *testing.T, ctx context.Context, r *Run) string {
	msgs, err := r.poison.Peek(ctx, 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("poison queue: %d messages, %v", len(msgs), err)
	}
	i := strings.Index(msgs[0].Text, `"text":"`)
	return strings.TrimSuffix(msgs[0].Text[i+len(`"text":"`):], `"}`)
}

// checkReport4x4 compares a 4x4 run through the target ply with the
// reference engine: counts and results of every ply.
func checkReport4x4(t *testing.T, rep *report.Report, target int) {
	t.Helper()
	ref, err := reference.Enumerate(board.MustNew(4), target)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Root != ref.Report.Root || len(rep.Plies) != len(ref.Report.Plies) {
		t.Fatalf("complete %v, root %s, %d plies; want complete, %s, %d plies", rep.Complete, rep.Root, len(rep.Plies), ref.Report.Root, len(ref.Report.Plies))
	}
	for i, p := range rep.Plies {
		w := ref.Report.Plies[i]
		if got, want := [7]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws, p.Unknown}, [7]int64{w.Positions, w.Terminal, w.Edges, w.BlackWins, w.WhiteWins, w.Draws, w.Unknown}; got != want {
			t.Errorf("ply %d: got %v, reference %v", i, got, want)
		}
	}
}

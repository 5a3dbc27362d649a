package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// claimBackend interferes with the first merge message of one ply, after
// the scan claimed its runs: it loses it (never enqueued, kept in lost) or
// delivers it as if it had been dequeued too often (poisoned). It also
// notices when a scan releases an expired claim, and can hold back the
// commit of the lost merge's claim until then.
type claimBackend struct {
	storage.Backend
	ply    int
	poison bool

	mu       sync.Mutex
	lost     string
	poisoned bool
	gotLost  chan struct{}
	atCommit chan struct{} // the lost merge reached its commit
	released chan struct{}
	atOnce   sync.Once
	relOnce  sync.Once
}

func newClaimBackend(be storage.Backend, ply int, poison bool) *claimBackend {
	return &claimBackend{Backend: be, ply: ply, poison: poison, gotLost: make(chan struct{}), atCommit: make(chan struct{}), released: make(chan struct{})}
}

func (b *claimBackend) Queue(name string) storage.Queue {
	q := b.Backend.Queue(name)
	if strings.HasSuffix(name, "-work") {
		return claimQueue{q, b}
	}
	return q
}

func (b *claimBackend) Table(name string) storage.Table {
	t := b.Backend.Table(name)
	if strings.HasSuffix(name, "state") {
		return claimTable{t, b}
	}
	return t
}

func (b *claimBackend) isTarget(text string) bool {
	return strings.HasPrefix(text, fmt.Sprintf("M%02d-", b.ply))
}

type claimQueue struct {
	storage.Queue
	b *claimBackend
}

func (q claimQueue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
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

func (q claimQueue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
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

type claimTable struct {
	storage.Table
	b *claimBackend
}

// Transact orders the lost merge and the release of its claim: the merge
// reads its inputs and reaches its commit first, the release goes through,
// and only then is the merge's commit tried.
func (t claimTable) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	b := t.b
	b.mu.Lock()
	lost := b.lost
	b.mu.Unlock()
	// The test knows the row layout (runstore's doc): a release rewrites
	// runs with an empty Claim; a merge commits with the row "x<claim>" in
	// the ply's run partition "rNN".
	release := len(ops) > 0 && ops[0].Kind == storage.OpUpdate && ops[0].Entity.Props["Claim"] == ""
	if lost != "" && pk == fmt.Sprintf("r%02d", b.ply) {
		claim := lost[len("M00-"):]
		if slices.ContainsFunc(ops, func(op storage.Op) bool { return op.Entity.RowKey == "x"+claim }) {
			b.atOnce.Do(func() { close(b.atCommit) })
			if err := wait(ctx, b.released); err != nil {
				return nil, err
			}
		}
		if release && !b.poison {
			if err := wait(ctx, b.atCommit); err != nil {
				return nil, err
			}
		}
	}
	etags, err := t.Table.Transact(ctx, pk, ops)
	if err == nil && release {
		b.relOnce.Do(func() { close(b.released) })
	}
	return etags, err
}

func wait(ctx context.Context, c chan struct{}) error {
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle runs a worker until the work queue is empty, so that delayed
// compensation messages are handled.
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
		n, err := r.work.ApproximateLength(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		sleep(ctx, 100*time.Millisecond)
		if ctx.Err() != nil {
			t.Fatal("the work queue did not empty in time")
		}
	}
	cancel()
	<-done
}

// TestExpiredClaimIsReleased loses or poisons a merge message after the
// scan claimed its runs, and checks that the run still completes exactly:
// idle workers see an empty queue in an incomplete run and nudge a scan,
// which releases the claim once it is older than the claim timeout and
// claims the runs again. In the lost case the lost merge runs all the
// same, as if its message had been delivered after all: it reads its
// inputs and writes its outputs, the release goes through before its
// commit, so the commit must fail on the changed ETags and leave nothing
// behind (its compensation messages delete its outputs).
func TestExpiredClaimIsReleased(t *testing.T) {
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, ClaimTimeout: 5 * time.Second, PollMax: 50 * time.Millisecond}
	for _, poison := range []bool{false, true} {
		name := map[bool]string{false: "lost and late", true: "poisoned"}[poison]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			be := newClaimBackend(openEmbedded(t), 7, poison)
			cfg := RunConfig{Name: "claims", Board: 4, Target: 8, BlobPositions: 100, FanIn: 4}
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
					ocfg.CompensationDelay, ocfg.ClaimTimeout = 6*time.Second, 7*time.Second
					old := &task.Task{Run: r.shared, Msg: storage.Message{ID: "late"}, Timing: ocfg.WithDefaults().timing(),
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
			select {
			case <-be.released:
			default:
				t.Error("no claim was released")
			}
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
				err, _ := oldMerge.Load().(error)
				// Refused on the released runs' new ETags, or on their
				// absence if the new claim's merge committed first.
				if !errors.Is(err, runstore.ErrConflict) {
					t.Errorf("the late merge of the released claim: %v; want its commit refused (precondition failed or not found)", err)
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

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// poisonRecords reads the poison queue's records.
func poisonRecords(t *testing.T, ctx context.Context, r *Run) []poisonRecord {
	t.Helper()
	msgs, err := r.poison.Peek(ctx, storage.MaxDequeue)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]poisonRecord, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal([]byte(m.Text), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestPanicAndInvalidArePoisonedAtOnce injects two messages into a 4x4
// run whose handlers panic on one and fail with storage.ErrInvalid on the
// other: both go to the poison queue on their first delivery, with their
// reasons (the panic's stack in the log), and the same worker loop goes
// on to finish the run exactly.
func TestPanicAndInvalidArePoisonedAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "mwpoison", Config: runstore.Config{Board: 4, Target: 12}}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Well-formed messages that the run itself never sends: scans of a
	// ply whose record does not exist yet are ignored by the real handler.
	panics, err := r.work.Enqueue(ctx, "S11", storage.EnqueueOptions{TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	invalid, err := r.work.Enqueue(ctx, "S12", storage.EnqueueOptions{TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	w, err := NewWorker(r, WorkerConfig{Visibility: 5 * time.Second, ExitWhenDone: true, PollMax: 20 * time.Millisecond},
		slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.handler = chain(task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
		switch t.Msg.ID {
		case panics.ID:
			var none map[string]int
			none["boom"]++ // a nil map: a real bug, a runtime panic
		case invalid.ID:
			return fmt.Errorf("writing a row: %w", storage.ErrInvalid)
		}
		return route(ctx, t, m)
	}), recoverPanics, billByKind, checkPly)
	w.Run(ctx)
	rep, err := r.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)

	got := map[string]poisonRecord{}
	for _, pr := range poisonRecords(t, ctx, r) {
		got[pr.Text] = pr
	}
	if len(got) != 2 {
		t.Fatalf("poison queue holds %v, want the two injected messages", got)
	}
	for text, want := range map[string]string{"S11": "handler panicked: assignment to entry in nil map", "S12": "writing a row: storage: invalid request"} {
		pr := got[text]
		if pr.DequeueCount != 1 || pr.Reason != want {
			t.Errorf("%s: poisoned after %d deliveries with reason %q; want 1 and %q", text, pr.DequeueCount, pr.Reason, want)
		}
	}
	if !strings.Contains(logs.String(), "middleware_test.go") {
		t.Error("the panic's log line holds no stack through the handler")
	}
}

// TestLeaseLossStopsAMerge loses the lease of a merge while it writes its
// output, and checks that the merge stops within a second (the task
// context reaches every storage call), that its message is handled again
// later, and that the run ends exact and clean once compensation has
// removed what the abandoned attempt wrote.
func TestLeaseLossStopsAMerge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := tickClock{ticks: make(chan time.Time, 1)}
	var (
		once      sync.Once
		lost      = make(chan struct{})
		mu        sync.Mutex
		stoppedIn time.Duration
		stopped   bool
	)
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		select {
		case <-lost:
			if c.Op == storage.QueueUpdateVisibility { // only the lease of the merge is ever ticked
				return storage.ErrLeaseLost
			}
		default:
		}
		if c.Op != storage.BlobUpload || storage.CategoryFrom(c.Ctx) != task.CategoryDedup {
			return next()
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			return next()
		}
		// The first merge output: the lease is lost while it uploads.
		close(lost)
		clock.ticks <- time.Now()
		start := time.Now()
		select {
		case <-c.Ctx.Done():
			mu.Lock()
			stoppedIn, stopped = time.Since(start), true
			mu.Unlock()
			return c.Ctx.Err()
		case <-time.After(5 * time.Second):
			return next()
		}
	})
	cfg := RunConfig{Name: "leaseloss", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 4}}}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, ExitWhenDone: true, PollMax: 20 * time.Millisecond, Clock: clock}
	w, err := NewWorker(r, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Run(ctx)
	mu.Lock()
	if !stopped || stoppedIn > time.Second {
		t.Errorf("the merge stopped %v after losing its lease (stopped: %v); want within a second", stoppedIn, stopped)
	}
	mu.Unlock()
	rep, err := r.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)
	wcfg.ExitWhenDone = false
	settle(t, ctx, r, wcfg)
	expectClean(t, ctx, r, "after the abandoned merge's compensation")
}

// TestEachPlyIsBilled runs a 6x6 run to ply 5 and checks that the
// storage transactions of every ply's handling are counted for that ply,
// that only control work (polling and settling messages, seeding) is
// left without one, and that the counts survive recording in the run
// and pricing in the report, where the plies and the rest add up to the
// total.
func TestEachPlyIsBilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "plybill", Config: runstore.Config{Board: 6, Target: 5}}.WithDefaults()
	if _, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 5 * time.Second, PollMax: 20 * time.Millisecond}, nil, nil); err != nil {
		t.Fatal(err)
	}
	s := be.Stats()
	if len(s.Plies) != cfg.Target+1 {
		t.Fatalf("transactions counted for plies %+v, want 0 to %d", s.Plies, cfg.Target)
	}
	var perPly int64
	for i, p := range s.Plies {
		if p.Ply != i || p.Total() == 0 {
			t.Errorf("plies[%d]: %+v, want ply %d with transactions", i, p, i)
		}
		perPly += p.Total()
	}
	byCat := s.ByCategory()
	if handlers := s.Total() - byCat[task.CategoryControl]; perPly < handlers || s.Unattributed() > byCat[task.CategoryControl] {
		t.Errorf("plies have %d transactions, handlers of other categories than control made %d; %d left without a ply, %d control",
			perPly, handlers, s.Unattributed(), byCat[task.CategoryControl])
	}

	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RecordStats(ctx, "w1", runstore.WorkerStats{Storage: s}); err != nil {
		t.Fatal(err)
	}
	all, err := r.RecordedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recorded := all.Storage
	if !reflect.DeepEqual(recorded.Plies, s.Plies) || recorded.Total() != s.Total() {
		t.Errorf("recorded plies %+v, want %+v", recorded.Plies, s.Plies)
	}
	rep, err := r.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep.SetCost(report.EstimateCost(recorded, 0, report.DefaultPrices))
	sum, usd := rep.Cost.NoPly.Transactions, rep.Cost.NoPly.USD
	for _, p := range rep.Plies {
		if p.Transactions == 0 || p.CostUSD <= 0 {
			t.Errorf("ply %d: %d transactions, $%v", p.Ply, p.Transactions, p.CostUSD)
		}
		sum, usd = sum+p.Transactions, usd+p.CostUSD
	}
	if sum != recorded.Total() || math.Abs(usd-rep.Cost.TransactionsUSD) > 1e-9 {
		t.Errorf("plies and the rest: %d transactions, $%v; the run: %d, $%v", sum, usd, recorded.Total(), rep.Cost.TransactionsUSD)
	}
}

// TestRetryThrottledCounts: a task that storage keeps throttling runs
// once plus the configured reruns, none with NoThrottleRetries, and once
// in all when it succeeds or fails otherwise.
func TestRetryThrottledCounts(t *testing.T) {
	for _, c := range []struct {
		name      string
		retries   int
		throttled int // calls that fail with ErrThrottled before the outcome
		outcome   error
		calls     int
		wantErr   error
	}{
		{"default reruns, always throttled", 0, 100, nil, 7, storage.ErrThrottled},
		{"two reruns, always throttled", 2, 100, nil, 3, storage.ErrThrottled},
		{"no reruns", NoThrottleRetries, 100, nil, 1, storage.ErrThrottled},
		{"throttled once, then done", 0, 1, nil, 2, nil},
		{"other failure", 0, 0, storage.ErrInvalid, 1, storage.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := WorkerConfig{ThrottleRetries: c.retries, ThrottleDelay: time.Nanosecond}.WithDefaults()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			calls := 0
			h := retryThrottled(cfg.ThrottleRetries, cfg.ThrottleDelay)(task.HandlerFunc(func(context.Context, *task.Task, message.Message) error {
				calls++
				if calls <= c.throttled {
					return fmt.Errorf("writing a row: %w", storage.ErrThrottled)
				}
				return c.outcome
			}))
			err := h.Handle(context.Background(), &task.Task{Log: slog.New(slog.DiscardHandler)}, message.Message{})
			if calls != c.calls || !errors.Is(err, c.wantErr) {
				t.Errorf("%d calls, error %v; want %d calls, error %v", calls, err, c.calls, c.wantErr)
			}
		})
	}
	if err := (WorkerConfig{ThrottleRetries: -2}).WithDefaults().Validate(); err == nil {
		t.Error("throttle retries -2 accepted")
	}
}

// TestLabelProfile checks that a handler runs under its message's kind
// and ply as profiler labels (the goroutines it starts inherit them from
// its own: the runtime's rule).
func TestLabelProfile(t *testing.T) {
	for _, m := range []message.Message{{Kind: message.KindChunk, Ply: 12}, {Kind: message.KindMerge, Ply: 0}} {
		var kind, ply string
		h := labelProfile(task.HandlerFunc(func(ctx context.Context, _ *task.Task, _ message.Message) error {
			kind, _ = pprof.Label(ctx, "kind")
			ply, _ = pprof.Label(ctx, "ply")
			return errors.ErrUnsupported
		}))
		if err := h.Handle(context.Background(), &task.Task{}, m); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%v: the handler's error became %v", m.Kind, err)
		}
		if want := fmt.Sprint(m.Ply); kind != m.Kind.String() || ply != want {
			t.Errorf("%v ply %d: labels kind %q, ply %q; want %q, %q", m.Kind, m.Ply, kind, ply, m.Kind.String(), want)
		}
	}
}

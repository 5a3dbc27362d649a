package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// fakeClock is a clock that moves only when told to, or when a throttled
// call sleeps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.Advance(d)
	return nil
}

// throttled opens embedded storage with a container, queues qone and qtwo and
// table tab, behind a Throttle at 1/1000 of Azure's targets (20 requests a
// second per account, 2 messages per queue, 2 entities per partition),
// on a fake clock.
func throttled(t *testing.T, maxWait time.Duration) (storage.Backend, *faulty.Throttle, *fakeClock) {
	t.Helper()
	inner := open(t)
	ctx := context.Background()
	for _, q := range []string{"qone", "qtwo"} {
		if err := inner.Queue(q).Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := inner.Table("tab").Create(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	th, err := faulty.NewThrottle(faulty.ThrottleConfig{Scale: 1000, MaxWait: maxWait, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	return th.Wrap(inner), th, clock
}

func TestThrottleConfig(t *testing.T) {
	for _, cfg := range []faulty.ThrottleConfig{{Scale: -1}, {Burst: -time.Second}, {MaxWait: -time.Second}} {
		if _, err := faulty.NewThrottle(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestThrottleScopes: each kind of limit refuses the call that exceeds
// it, and only calls on its own scope.
func TestThrottleScopes(t *testing.T) {
	ctx := context.Background()
	ent := func(pk, rk string) storage.Entity { return storage.Entity{PartitionKey: pk, RowKey: rk} }
	type step struct {
		call    func(b storage.Backend) error
		advance time.Duration // before the call
		refused string        // the binding limit, or "" if admitted
	}
	put := func(b storage.Backend) error { return b.Container("blobs").Put(ctx, "x", nil) }
	enqueue := func(q string) func(b storage.Backend) error {
		return func(b storage.Backend) error {
			_, err := b.Queue(q).Enqueue(ctx, "m", storage.EnqueueOptions{})
			return err
		}
	}
	upsert := func(pk string) func(b storage.Backend) error {
		return func(b storage.Backend) error { _, err := b.Table("tab").Upsert(ctx, ent(pk, "r")); return err }
	}
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		steps   []step
		busiest map[string]float64 // what the busiest scope of each kind took
		named   map[string]string  // and its name
	}{
		{"account", append(repeat(20, step{call: put}),
			step{call: put, refused: faulty.ScopeAccount},
			step{call: put, advance: 50 * time.Millisecond}, // one request's worth
			step{call: put, refused: faulty.ScopeAccount},
			step{call: enqueue("qone"), refused: faulty.ScopeAccount}, // every service counts
		), map[string]float64{faulty.ScopeAccount: 21}, map[string]string{}},
		{"queue", []step{
			{call: enqueue("qone")},
			{call: enqueue("qone")},
			{call: enqueue("qone"), refused: faulty.ScopeQueue},
			{call: enqueue("qtwo")}, // another queue
			{call: put},             // another service
			{call: enqueue("qone"), advance: 500 * time.Millisecond},
		}, map[string]float64{faulty.ScopeAccount: 5, faulty.ScopeQueue: 3}, map[string]string{faulty.ScopeQueue: "qone"}},
		{"partition", []step{
			{call: upsert("a")},
			{call: upsert("a")},
			{call: upsert("a"), refused: faulty.ScopePartition},
			{call: upsert("b")}, // another partition
			{call: func(b storage.Backend) error { // creating a table takes from no partition
				return b.Table("other").Create(ctx)
			}},
		}, map[string]float64{faulty.ScopeAccount: 4, faulty.ScopePartition: 2}, map[string]string{faulty.ScopePartition: "tab/a"}},
		{"transaction", []step{
			// Three entities from a bucket of two: served when full, the
			// third entity a debt of half a second.
			{call: func(b storage.Backend) error {
				_, err := b.Table("tab").Transact(ctx, "a", []storage.Op{
					{Kind: storage.OpUpsert, Entity: ent("a", "1")}, {Kind: storage.OpUpsert, Entity: ent("a", "2")}, {Kind: storage.OpUpsert, Entity: ent("a", "3")},
				})
				return err
			}},
			{call: upsert("a"), advance: 999 * time.Millisecond, refused: faulty.ScopePartition},
			{call: upsert("a"), advance: time.Millisecond},
		}, map[string]float64{faulty.ScopeAccount: 2, faulty.ScopePartition: 4}, map[string]string{faulty.ScopePartition: "tab/a"}},
		{"dequeue", []step{
			{call: enqueue("qone")},
			{call: enqueue("qone"), advance: time.Second},
			{call: enqueue("qone"), advance: time.Second},
			// Three messages at once: one charged before, two after.
			{call: func(b storage.Backend) error {
				msgs, err := b.Queue("qone").Dequeue(ctx, 32, time.Minute)
				if err == nil && len(msgs) != 3 {
					err = fmt.Errorf("dequeued %d messages, want 3", len(msgs))
				}
				return err
			}, advance: time.Second},
			{call: enqueue("qone"), advance: 999 * time.Millisecond, refused: faulty.ScopeQueue},
			{call: enqueue("qone"), advance: time.Millisecond},
		}, map[string]float64{faulty.ScopeAccount: 5, faulty.ScopeQueue: 7}, map[string]string{faulty.ScopeQueue: "qone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, th, clock := throttled(t, 0)
			refused := map[string]int64{}
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				err := s.call(b)
				switch {
				case s.refused == "" && err != nil:
					t.Fatalf("step %d: %v, want it admitted", i, err)
				case s.refused != "" && (!errors.Is(err, storage.ErrThrottled) || !errors.Is(err, storage.ErrTransient)):
					t.Fatalf("step %d: %v, want ErrThrottled and ErrTransient", i, err)
				case s.refused != "":
					refused[s.refused]++
				}
			}
			st := th.Stats()
			var n int64
			for _, k := range refused {
				n += k
			}
			if fmt.Sprint(st.RefusedBy) != fmt.Sprint(refused) || st.Refused != n {
				t.Errorf("refused %d, by %v; want %d, by %v", st.Refused, st.RefusedBy, n, refused)
			}
			if want := int64(len(tc.steps)) - st.Refused; st.Calls != want {
				t.Errorf("%d calls admitted, want %d", st.Calls, want)
			}
			if fmt.Sprint(st.Busiest) != fmt.Sprint(tc.busiest) || fmt.Sprint(st.BusiestName) != fmt.Sprint(tc.named) {
				t.Errorf("busiest scopes %v took %v, want %v and %v", st.BusiestName, st.Busiest, tc.named, tc.busiest)
			}
		})
	}
}

// TestThrottleRefusedCallNotPerformed: a refused write leaves no trace.
func TestThrottleRefusedCallNotPerformed(t *testing.T) {
	b, _, _ := throttled(t, 0)
	ctx := context.Background()
	for i := range 2 {
		if _, err := b.Table("tab").Add(ctx, storage.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Table("tab").Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "refused"}); !errors.Is(err, storage.ErrThrottled) {
		t.Fatalf("third add: %v, want ErrThrottled", err)
	}
	if _, err := b.Table("tab").Get(ctx, "p", "refused"); !errors.Is(err, storage.ErrThrottled) {
		t.Fatalf("get at once: %v, want ErrThrottled", err)
	}
}

// TestThrottleLevelsOff: a caller that may wait is always served, and
// the simulated time its calls take is what the limit allows: throughput
// levels off at the rate instead of failing.
func TestThrottleLevelsOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		calls    int
		burst    int // what the bucket holds at the start
		queue    bool
		wantTime time.Duration // simulated: (calls - burst) / rate
	}{
		{"account", 220, 20, false, (220 - 20) * time.Second / 20},
		{"queue", 30, 2, true, (30 - 2) * time.Second / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, th, clock := throttled(t, time.Hour)
			start := clock.Now()
			ctx := context.Background()
			for i := range tc.calls {
				var err error
				if tc.queue {
					_, err = b.Queue("qone").Enqueue(ctx, "m", storage.EnqueueOptions{})
				} else {
					err = b.Container("blobs").Put(ctx, fmt.Sprint(i), nil)
				}
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			st := th.Stats()
			if st.Calls != int64(tc.calls) || st.Refused != 0 || st.Waits != int64(tc.calls-tc.burst) {
				t.Errorf("%d calls admitted, %d waited, %d refused; want %d, %d, 0", st.Calls, st.Waits, st.Refused, tc.calls, tc.calls-tc.burst)
			}
			if got := clock.Now().Sub(start); got != st.Waited || absDiff(got, tc.wantTime) > time.Millisecond {
				t.Errorf("simulated time %v (waited %v), want %v", got, st.Waited, tc.wantTime)
			}
		})
	}
}

// TestThrottleConcurrent: many goroutines on one Throttle are each
// admitted or refused, never lost: the calls that reached the backend are
// exactly those admitted.
func TestThrottleConcurrent(t *testing.T) {
	b, th, clock := throttled(t, 0)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				err := b.Container("blobs").Put(ctx, fmt.Sprintf("w%d-%d", w, i), nil)
				if err != nil && !errors.Is(err, storage.ErrThrottled) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	st := th.Stats()
	if st.Calls != 20 || st.Refused != 60 {
		t.Errorf("%d admitted, %d refused; want the burst of 20 and 60", st.Calls, st.Refused)
	}
	clock.Advance(time.Second)
	if list, err := b.Container("blobs").List(ctx, "w"); err != nil || len(list) != 20 {
		t.Errorf("%d blobs written (%v), want the 20 admitted", len(list), err)
	}
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}

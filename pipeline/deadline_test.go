package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// jumpClock is the system's clock, moved forward by jump just before
// it answers the skip+1-th call of Now after Arm.
type jumpClock struct {
	mu     sync.Mutex
	offset time.Duration
	armed  bool
	skip   int
	jump   time.Duration
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed {
		if c.skip == 0 {
			c.offset += c.jump
			c.armed = false
		}
		c.skip--
	}
	return time.Now().Add(c.offset)
}

func (c *jumpClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (c *jumpClock) Arm(skip int, jump time.Duration) {
	c.mu.Lock()
	c.armed, c.skip, c.jump = true, skip, jump
	c.mu.Unlock()
}

// TestSlowMergeDoesNotCommitLate makes one merge of ply 6 outlive its
// first final blob's compensation delay. The merge writes that blob and
// its rows and checks its deadline; then the clock jumps past the delay,
// just as the merge covers its second blob, as if merging the positions
// between had taken that long. The merge writes its other blobs, each
// under a fresh compensation message, and comes to its commit: it must
// refuse, since the first blob's message has surfaced and may have
// deleted it, and a retry must merge the bucket. A merge that checked
// only the blob it had just written committed, naming a blob that was no
// longer safe.
//
// One worker makes the task the clock's only reader (leases use only
// After): after the first blob's rows, the merge reads it once to check
// that blob's deadline and next to cover the second blob.
func TestSlowMergeDoesNotCommitLate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := &jumpClock{}
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, PollMax: 20 * time.Millisecond, Clock: clock}
	var slowed atomic.Value
	be := firstOutput(t, func(attempt string) {
		slowed.Store(attempt)
		clock.Arm(1, wcfg.CompensationDelay)
	})
	cfg := RunConfig{Name: "slowmerge", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 4}}}
	rep, err := RunLocal(ctx, be, cfg, 1, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)
	attempt, _ := slowed.Load().(string)
	if attempt == "" {
		t.Fatal("no merge of bucket 1 of ply 6 wrote a first output: the test slowed nothing")
	}
	if bm := settledMerge(t, ctx, be, cfg, wcfg); strings.HasPrefix(attempt, bm.Attempt) {
		t.Errorf("the slowed merge (attempt %s) committed bucket 1 after its first blob's compensation delay", bm.Attempt)
	}
}

// firstOutput is the embedded backend, which calls at, once, with the
// attempt of the first merge of bucket 1 of ply 6 to write the sources
// of its first output blob (sp06-f-000001-0000-<attempt>, right after
// the blob), before that write returns.
func firstOutput(t *testing.T, at func(attempt string)) storage.Backend {
	var once sync.Once
	return storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		const first = "sp06-f-000001-0000-"
		if err == nil && c.Op == storage.TableTransact && strings.HasPrefix(c.Partition, first) {
			once.Do(func() { at(strings.TrimPrefix(c.Partition, first)) })
		}
		return err
	})
}

// settledMerge settles a finished run's queues, requires a clean audit
// and returns the marker of bucket 1 of ply 6.
func settledMerge(t *testing.T, ctx context.Context, be storage.Backend, cfg RunConfig, wcfg WorkerConfig) runstore.BucketMerge {
	t.Helper()
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	p6, err := r.store.Ply(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	bms, err := r.store.MergeStage(p6).MarkersIn(ctx, runstore.Span{Lo: 1, Hi: 2})
	if err != nil || len(bms) != 1 {
		t.Fatalf("bucket 1 of ply 6: %d markers, %v", len(bms), err)
	}
	settle(t, ctx, r, wcfg)
	if got, _ := auditLines(t, ctx, r); !slices.Equal(got, []string(nil)) {
		t.Errorf("audit %q, want it clean", got)
	}
	return bms[0]
}

// fastClock is the system's clock, which, while armed, a lease's
// renewals drive: each After(d) moves it d forward and fires at once, so
// a task held up in real milliseconds lives through minutes of it with
// its lease renewing all along.
type fastClock struct {
	mu     sync.Mutex
	offset time.Duration
	armed  bool
}

func (c *fastClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *fastClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed {
		return time.After(d)
	}
	c.offset += d
	return time.After(time.Millisecond)
}

func (c *fastClock) arm(on bool) {
	c.mu.Lock()
	c.armed = on
	c.mu.Unlock()
}

// TestLongMergeCommits holds one merge of ply 6 up, after its first
// final blob, for five compensation delays of the workers' clock (20
// visibility timeouts), while its lease renews its message and its
// compensation messages: the merge must then commit, not fail with
// compensation.ErrExpired as a merge did whose window was fixed when it
// covered its first blob (a bucket merge at ply 17 needs minutes).
func TestLongMergeCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := &fastClock{}
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 8 * time.Second, PollMax: 20 * time.Millisecond, Clock: clock}
	var slowed atomic.Value
	be := firstOutput(t, func(attempt string) {
		slowed.Store(attempt)
		start := clock.Now()
		clock.arm(true)
		for clock.Now().Sub(start) < 5*wcfg.CompensationDelay && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		clock.arm(false)
	})
	cfg := RunConfig{Name: "longmerge", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 4}}}
	rep, err := RunLocal(ctx, be, cfg, 1, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)
	attempt, _ := slowed.Load().(string)
	if attempt == "" {
		t.Fatal("no merge of bucket 1 of ply 6 wrote a first output: the test held nothing up")
	}
	if bm := settledMerge(t, ctx, be, cfg, wcfg); !strings.HasPrefix(attempt, bm.Attempt) {
		t.Errorf("bucket 1 of ply 6 was committed by attempt %s, not by the long merge (%s)", bm.Attempt, attempt)
	}
}

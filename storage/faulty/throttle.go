package faulty

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// Azure's scalability targets for a standard general-purpose v2 account,
// which a Throttle enforces divided by its Scale.
const (
	AccountRequestsPerSecond   = 20000 // requests per account
	QueueMessagesPerSecond     = 2000  // messages per queue
	PartitionEntitiesPerSecond = 2000  // entities per table partition
)

// ThrottleConfig sets the rates a Throttle enforces. Zero fields take the
// defaults shown.
type ThrottleConfig struct {
	// Scale divides Azure's targets (default 1): with 1000, an account
	// takes 20 requests a second and a queue or partition 2.
	Scale float64
	// Burst is how many seconds of its rate a bucket holds when idle
	// (default 1s): the most a scope takes at once after a quiet spell.
	Burst time.Duration
	// MaxWait stands for the backend's own retries: a call that its
	// buckets could admit within MaxWait waits for them; one that would
	// wait longer fails with storage.ErrThrottled. Zero (the default)
	// fails every call that finds a bucket empty.
	MaxWait time.Duration
	// Now and Sleep are the clock (default time.Now and a timer that
	// honours ctx); tests inject a fake one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Validate checks the configuration.
func (c ThrottleConfig) Validate() error {
	switch {
	case c.Scale < 0:
		return fmt.Errorf("faulty: throttle: Scale %g is negative", c.Scale)
	case c.Burst < 0:
		return fmt.Errorf("faulty: throttle: Burst %v is negative", c.Burst)
	case c.MaxWait < 0:
		return fmt.Errorf("faulty: throttle: MaxWait %v is negative", c.MaxWait)
	}
	return nil
}

func (c ThrottleConfig) withDefaults() ThrottleConfig {
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.Burst == 0 {
		c.Burst = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = storage.Sleep
	}
	return c
}

// Scope kinds: what a rate limit applies to, as ThrottleStats names them.
const (
	ScopeAccount   = "account"
	ScopeQueue     = "queue"
	ScopePartition = "partition"
)

// ThrottleStats counts what a Throttle did.
type ThrottleStats struct {
	Calls   int64         // calls admitted
	Waits   int64         // admitted calls that waited for their buckets
	Waited  time.Duration // the total of those waits
	Refused int64         // calls failed with storage.ErrThrottled
	// RefusedBy counts the refusals by the kind of scope whose bucket
	// would have made the call wait longest: the binding limit.
	RefusedBy map[string]int64
	// Busiest is, by kind of scope, the most that one scope of that kind
	// took: requests of the account, messages of the busiest queue,
	// entities of the busiest partition. Over the time taken, it is the
	// throughput to set against the scope's rate.
	Busiest map[string]float64
	// BusiestName names the busiest queue (its name) and partition
	// (table/key), of those that took the most the first in name order.
	BusiestName map[string]string
}

// Throttle stands for one storage account under Azure's rate limits,
// scaled down: token buckets per account, per queue and per table
// partition. Every call takes one request from the account; a queue call
// takes one message from its queue, a Dequeue or Peek one per message it
// returned; a table entity call takes one entity from its partition, a
// Transact one per operation and a Query one per entity it returned.
// Counts known only after the call (messages and entities returned) are
// taken afterwards, as a debt later calls wait for. A call over a limit
// is not performed and fails with storage.ErrThrottled and
// storage.ErrTransient, as the Azure adapter's do once its retries give up.
//
// Wrap every worker's backend of one account with the same Throttle.
// It is safe for concurrent use.
type Throttle struct {
	cfg                                ThrottleConfig
	accountRate, queueRate, entityRate float64

	mu      sync.Mutex
	buckets map[scope]*bucket
	stats   ThrottleStats
}

// scope is one rate-limited thing: the account (name ""), a queue, or a
// table partition (table name and key).
type scope struct {
	kind, name, partition string
}

// NewThrottle builds a Throttle; it fails only on a bad cfg.
func NewThrottle(cfg ThrottleConfig) (*Throttle, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Throttle{
		cfg:         cfg,
		accountRate: AccountRequestsPerSecond / cfg.Scale,
		queueRate:   QueueMessagesPerSecond / cfg.Scale,
		entityRate:  PartitionEntitiesPerSecond / cfg.Scale,
		buckets:     map[scope]*bucket{},
		stats:       ThrottleStats{RefusedBy: map[string]int64{}},
	}, nil
}

// Wrap returns inner with every call passed through the throttle.
func (t *Throttle) Wrap(inner storage.Backend) storage.Backend {
	return storage.Wrap(inner, t.intercept)
}

// Stats returns the counts so far.
func (t *Throttle) Stats() ThrottleStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.RefusedBy = make(map[string]int64, len(t.stats.RefusedBy))
	for k, v := range t.stats.RefusedBy {
		s.RefusedBy[k] = v
	}
	s.Busiest, s.BusiestName = map[string]float64{}, map[string]string{}
	for sc, b := range t.buckets {
		if b.taken <= 0 {
			continue
		}
		name := sc.name
		if sc.kind == ScopePartition {
			name += "/" + sc.partition
		}
		if most, ok := s.Busiest[sc.kind]; !ok || b.taken > most || b.taken == most && name < s.BusiestName[sc.kind] {
			s.Busiest[sc.kind] = b.taken
			if sc.kind != ScopeAccount {
				s.BusiestName[sc.kind] = name
			}
		}
	}
	return s
}

// bucket is a token bucket that may run into debt: tokens below zero
// are taken already, and refill before anyone else is served.
type bucket struct {
	rate, capacity float64 // tokens per second; the most it holds
	tokens         float64
	taken          float64 // tokens taken in all
	last           time.Time
}

func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.capacity, b.tokens+b.rate*d.Seconds())
	}
	b.last = now
}

// wait is how long until the bucket can serve cost: until it holds cost,
// or is full if cost is more than it holds. A shortfall below a
// nanosecond's worth is rounding, not a wait.
func (b *bucket) wait(cost float64) time.Duration {
	need := min(cost, b.capacity)
	if b.tokens >= need-b.rate*1e-9 {
		return 0
	}
	return time.Duration((need - b.tokens) / b.rate * float64(time.Second))
}

func (t *Throttle) bucket(s scope, rate float64, now time.Time) *bucket {
	b, ok := t.buckets[s]
	if !ok {
		c := max(rate*t.cfg.Burst.Seconds(), 1)
		b = &bucket{rate: rate, capacity: c, tokens: c, last: now}
		t.buckets[s] = b
	}
	b.refill(now)
	return b
}

// charge is what one call takes from one bucket.
type charge struct {
	s    scope
	rate float64
	cost float64
}

// charges lists what c takes before it is performed.
func (t *Throttle) charges(c *storage.Call) []charge {
	out := []charge{{scope{kind: ScopeAccount}, t.accountRate, 1}}
	switch {
	case c.Op.Service() == storage.ServiceQueue:
		out = append(out, charge{scope{kind: ScopeQueue, name: c.Resource}, t.queueRate, 1})
	case c.Op.Service() == storage.ServiceTable && c.Op != storage.TableCreate && c.Op != storage.TableDrop:
		cost := 1.0
		if c.Op == storage.TableTransact {
			cost = float64(max(c.Items, 1))
		}
		out = append(out, charge{scope{ScopePartition, c.Resource, c.Partition}, t.entityRate, cost})
	}
	return out
}

// admit takes the call's charges, or says how long they would wait and
// which scope binds.
func (t *Throttle) admit(c *storage.Call) (wait time.Duration, binding string, ok bool) {
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	chs := t.charges(c)
	bs := make([]*bucket, len(chs))
	for i, ch := range chs {
		bs[i] = t.bucket(ch.s, ch.rate, now)
		if w := bs[i].wait(ch.cost); w > wait {
			wait, binding = w, ch.s.kind
		}
	}
	if wait > t.cfg.MaxWait {
		t.stats.Refused++
		t.stats.RefusedBy[binding]++
		return wait, binding, false
	}
	for i, ch := range chs {
		bs[i].tokens -= ch.cost
		bs[i].taken += ch.cost
	}
	t.stats.Calls++
	if wait > 0 {
		t.stats.Waits++
		t.stats.Waited += wait
	}
	return wait, binding, true
}

// settle takes what the call turned out to cost beyond its charge: the
// messages or entities it returned past the first.
func (t *Throttle) settle(c *storage.Call) {
	if c.Items <= 1 {
		return
	}
	var s scope
	var rate float64
	switch c.Op {
	case storage.QueueDequeue, storage.QueuePeek:
		s, rate = scope{kind: ScopeQueue, name: c.Resource}, t.queueRate
	case storage.TableQuery:
		s, rate = scope{ScopePartition, c.Resource, c.Partition}, t.entityRate
	default:
		return
	}
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bucket(s, rate, now)
	b.tokens -= float64(c.Items - 1)
	b.taken += float64(c.Items - 1)
}

func (t *Throttle) intercept(c *storage.Call, next func() error) error {
	wait, binding, ok := t.admit(c)
	if !ok {
		return fmt.Errorf("%w: %w: faulty: %s on %s: over the %s rate limit by a wait of %v",
			storage.ErrThrottled, storage.ErrTransient, c.Op, c.Resource, binding, wait)
	}
	if wait > 0 {
		if err := t.cfg.Sleep(c.Ctx, wait); err != nil {
			return fmt.Errorf("faulty: waiting for the rate limit: %w", err)
		}
	}
	err := next()
	t.settle(c)
	return err
}

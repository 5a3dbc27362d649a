// Package sim is one Azure storage account simulated in this process,
// so that a fleet of hundreds of workers can be rehearsed on one machine:
// the in-process storage of storage/embedded, behind a latency on every
// call and Azure's scalability targets (faulty.Throttle, which counts
// entities and messages as Azure does), each a storage.Wrap middleware.
//
// A call waits Config.Latency before it is performed (the round trip to
// the service); a blob call also waits for its bytes at
// Config.Bandwidth, those it sends before it is performed and those it
// receives afterwards (an Open's body as the caller reads it). The waits
// are timers, not work: a worker waiting on storage costs no CPU, so the
// number of workers is bounded by their memory, not by the cores. Every
// wait is outside the embedded store's locks (which are per queue,
// container and table partition anyway), so the latency of one call
// never holds up another.
//
// The throttle answers a call over Azure's rates as Azure does once the
// SDK's retries give up: storage.ErrThrottled wrapped with
// storage.ErrTransient, which the pipeline's retry layer handles. A call
// that the throttle can admit within Config.MaxWait waits for it
// instead, standing for those retries.
package sim

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/faulty"
)

// Defaults of Config.
const (
	// DefaultLatency is the time a table or queue call takes end to end
	// within one Azure region: a few milliseconds at best, tens under load.
	DefaultLatency = 10 * time.Millisecond
	// DefaultBandwidth is the bytes per second one blob call moves: about
	// what one connection to a blob gets within a region (a block blob's
	// target is 60 MiB/s per blob).
	DefaultBandwidth = 60_000_000
	// DefaultMaxWait is how long a throttled call waits for the rate
	// limits before it fails: about what the Azure adapter's own retries
	// (storage/azure RetryConfig) wait, with their jitter, before the
	// later tries.
	DefaultMaxWait = 5 * time.Second
	// DefaultMemoryBytes is the memory of the embedded store underneath
	// (its block cache and write buffers). The account stands for
	// Azure's machines, not the workers': a rehearsal of small blobs
	// keeps gigabytes of rows and inline blobs, and the embedded default
	// (64 MB) made most reads decode sstable blocks afresh (40% of a
	// rehearsal's CPU to ply 10).
	DefaultMemoryBytes = 1 << 30
)

// Config configures a simulated account. Zero fields take the defaults.
type Config struct {
	// Dir is where the embedded store underneath spills to disk (a fresh
	// directory in it, removed by Close); empty means the system's
	// temporary directory.
	Dir string
	// Latency is what every call waits (default DefaultLatency).
	Latency time.Duration
	// Bandwidth is the bytes per second of one blob call (default
	// DefaultBandwidth).
	Bandwidth int64
	// MaxWait is the longest a call waits for the rate limits before it
	// is refused (default DefaultMaxWait).
	MaxWait time.Duration
	// MemoryBytes bounds the embedded store's memory (default
	// DefaultMemoryBytes).
	MemoryBytes int64
	// Now and Sleep are the clock (default time.Now and storage.Sleep);
	// tests inject a fake one.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Latency < 0:
		return fmt.Errorf("sim: latency %v is negative", c.Latency)
	case c.Bandwidth < 0:
		return fmt.Errorf("sim: bandwidth %d bytes/s is negative", c.Bandwidth)
	case c.MemoryBytes < 0:
		return fmt.Errorf("sim: memory %d bytes is negative", c.MemoryBytes)
	case c.MaxWait < 0:
		return fmt.Errorf("sim: the throttle's longest wait %v is negative", c.MaxWait)
	}
	return nil
}

// WithDefaults fills in the zero fields.
func (c Config) WithDefaults() Config {
	if c.Latency == 0 {
		c.Latency = DefaultLatency
	}
	if c.Bandwidth == 0 {
		c.Bandwidth = DefaultBandwidth
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = storage.Sleep
	}
	return c
}

// Backend is a simulated account. It is safe for concurrent use.
type Backend struct {
	storage.Backend // the embedded store through the account's middleware
	inner           storage.Backend
	throttle        *faulty.Throttle
}

// Inner is the account's storage without its latency and limits: for
// whoever stands outside the rehearsed fleet, such as the audit at the
// end of a rehearsal, which would otherwise read a whole run one
// simulated round trip at a time.
func (b *Backend) Inner() storage.Backend { return b.inner }

// Open starts a simulated account over a fresh embedded store.
func Open(cfg Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	inner, err := embedded.Open(embedded.Config{Dir: cfg.Dir, SpillToDisk: true, MemoryBytes: cfg.WithDefaults().MemoryBytes})
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return Over(inner, cfg)
}

// Over simulates an account over inner, which Close closes.
func Over(inner storage.Backend, cfg Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	th, err := faulty.NewThrottle(faulty.ThrottleConfig{MaxWait: cfg.MaxWait, Now: cfg.Now, Sleep: cfg.Sleep})
	if err != nil {
		return nil, err
	}
	a := &account{cfg: cfg}
	return &Backend{Backend: storage.Wrap(th.Wrap(inner), a.wait), inner: inner, throttle: th}, nil
}

// ThrottleStats says how often the rate limits made calls wait or
// refused them.
func (b *Backend) ThrottleStats() faulty.ThrottleStats { return b.throttle.Stats() }

// account holds the waits of one simulated account.
type account struct{ cfg Config }

// transfer is how long n bytes take at the account's bandwidth.
func (a *account) transfer(n int64) time.Duration {
	return time.Duration(float64(n) / float64(a.cfg.Bandwidth) * float64(time.Second))
}

// wait is the middleware: the latency and the bytes sent before the
// call, the bytes received after it. A call cancelled while waiting is
// not performed.
func (a *account) wait(c *storage.Call, next func() error) error {
	before := a.cfg.Latency
	blob := c.Op.Service() == storage.ServiceBlob
	if blob {
		before += a.transfer(c.Sent)
	}
	if err := a.cfg.Sleep(c.Ctx, before); err != nil {
		return fmt.Errorf("sim: %s on %s: %w", c.Op, c.Resource, err)
	}
	sent := c.Sent
	err := next()
	if !blob || err != nil {
		return err
	}
	if c.Body != nil {
		c.Body = &slowBody{rc: c.Body, a: a, ctx: c.Ctx}
	}
	// An Upload learns what it sent only as it is performed.
	if d := a.transfer(c.Received + c.Sent - sent); d > 0 {
		if err := a.cfg.Sleep(c.Ctx, d); err != nil {
			return fmt.Errorf("sim: %s on %s: %w", c.Op, c.Resource, err)
		}
	}
	return nil
}

// slowBody delivers an Open's body at the account's bandwidth. It waits
// once a millisecond's worth of bytes has been read, not on every Read,
// so that small reads cost no timer each.
type slowBody struct {
	rc   io.ReadCloser
	a    *account
	ctx  context.Context
	owed int64 // bytes read and not waited for yet
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.owed += int64(n)
	if d := b.a.transfer(b.owed); d >= time.Millisecond || err != nil && d > 0 {
		b.owed = 0
		if serr := b.a.cfg.Sleep(b.ctx, d); serr != nil {
			return n, serr
		}
	}
	return n, err
}

func (b *slowBody) Close() error { return b.rc.Close() }

package storage

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// ListPageSize is the number of names one List Blobs request returns; a
// listing of n blobs is billed as ceil(n/ListPageSize) transactions.
const ListPageSize = 5000

type categoryKey struct{}

// WithCategory labels the storage calls made with ctx, so that a Metered
// backend can split its transaction counts by what the caller was doing
// (for example "enumeration", "dedup" or "backtrack").
func WithCategory(ctx context.Context, category string) context.Context {
	return context.WithValue(ctx, categoryKey{}, category)
}

// CategoryFrom returns the label set by WithCategory, or "".
func CategoryFrom(ctx context.Context) string {
	c, _ := ctx.Value(categoryKey{}).(string)
	return c
}

// counters holds one category's transaction counts.
type counters [numOperations]atomic.Int64

// Metered wraps a Backend and counts its calls as Azure bills them: one
// transaction per request, every page of a query or listing and every
// staged block included. Because every backend is wrapped the same way,
// the counts mean the same thing whatever the backend.
//
// Calls rejected with ErrInvalid are not counted: backends check Azure's
// limits client-side, so those requests never reach the service. Every
// other call, failed or not, is counted, since Azure bills failed requests.
type Metered struct {
	inner   Backend
	wrapped Backend  // inner through meter
	base    counters // calls without a category: the common case, found without a map lookup
	cats    sync.Map // category string -> *counters

	written atomic.Int64
	read    atomic.Int64
}

var _ Backend = (*Metered)(nil)

// NewMetered wraps b. Counting is lock-free, so the wrapper may be shared
// by any number of goroutines.
func NewMetered(b Backend) *Metered {
	m := &Metered{inner: b}
	m.wrapped = Wrap(b, m.meter)
	return m
}

// Queue returns a metered handle on the named queue.
func (m *Metered) Queue(name string) Queue { return m.wrapped.Queue(name) }

// Container returns a metered handle on the named container.
func (m *Metered) Container(name string) Container { return m.wrapped.Container(name) }

// Table returns a metered handle on the named table.
func (m *Metered) Table(name string) Table { return m.wrapped.Table(name) }

// Close closes the wrapped backend. The counts stay readable.
func (m *Metered) Close() error { return m.inner.Close() }

// meter is the Middleware that counts. A listing is billed one
// transaction per ListPageSize names; an upload by the bytes that flowed
// through it: one Put Blob if they fit in SingleUploadBytes, else one Put
// Block per UploadBlockBytes and a Put Block List to commit them. Open is
// one request however its body is read; the bytes are counted as the
// caller reads them.
func (m *Metered) meter(c *Call, next func() error) error {
	err := next()
	if errors.Is(err, ErrInvalid) {
		return err
	}
	ctr := m.counters(c.Ctx)
	switch c.Op {
	case BlobList:
		ctr[BlobList].Add(max(1, (int64(c.Items)+ListPageSize-1)/ListPageSize))
	case BlobUpload:
		if c.Sent <= SingleUploadBytes {
			ctr[BlobUpload].Add(1)
		} else {
			ctr[BlobPutBlock].Add((c.Sent + UploadBlockBytes - 1) / UploadBlockBytes)
			ctr[BlobPutBlockList].Add(1)
		}
	default:
		ctr[c.Op].Add(1)
	}
	m.read.Add(c.Received)
	if err == nil {
		m.written.Add(c.Sent)
		if c.Body != nil {
			c.Body = &meteredReadCloser{rc: c.Body, m: m}
		}
	}
	return err
}

func (m *Metered) counters(ctx context.Context) *counters {
	c := CategoryFrom(ctx)
	if c == "" {
		return &m.base
	}
	if v, ok := m.cats.Load(c); ok {
		return v.(*counters)
	}
	v, _ := m.cats.LoadOrStore(c, new(counters))
	return v.(*counters)
}

// Stats returns a snapshot of the counts, one OpStat per (service,
// operation, category) with a non-zero count, sorted in that order.
// Counts taken while calls are under way are each exact but not mutually
// consistent; take Stats when the work being measured is done.
func (m *Metered) Stats() Stats {
	s := Stats{BytesWritten: m.written.Load(), BytesRead: m.read.Load()}
	add := func(cat string, c *counters) {
		for o := range numOperations {
			if n := c[o].Load(); n != 0 {
				s.Ops = append(s.Ops, OpStat{
					Service: o.Service(), Operation: o.Name(),
					Category: cat, Count: n,
				})
			}
		}
	}
	add("", &m.base)
	m.cats.Range(func(k, v any) bool {
		add(k.(string), v.(*counters))
		return true
	})
	sortOps(s.Ops)
	return s
}

func sortOps(ops []OpStat) {
	slices.SortFunc(ops, func(a, b OpStat) int {
		return cmp.Or(
			cmp.Compare(a.Service, b.Service),
			cmp.Compare(a.Operation, b.Operation),
			cmp.Compare(a.Category, b.Category),
		)
	})
}

// ByCategory sums transactions per category; calls without a category are
// under "".
func (s Stats) ByCategory() map[string]int64 {
	m := map[string]int64{}
	for _, o := range s.Ops {
		m[o.Category] += o.Count
	}
	return m
}

// Sub returns the transactions and bytes in s that are not in prev, an
// earlier snapshot of the same Metered: the cost of the work in between.
func (s Stats) Sub(prev Stats) Stats {
	type key struct{ service, op, cat string }
	before := make(map[key]int64, len(prev.Ops))
	for _, o := range prev.Ops {
		before[key{o.Service, o.Operation, o.Category}] += o.Count
	}
	d := Stats{BytesWritten: s.BytesWritten - prev.BytesWritten, BytesRead: s.BytesRead - prev.BytesRead}
	for _, o := range s.Ops {
		if n := o.Count - before[key{o.Service, o.Operation, o.Category}]; n != 0 {
			o.Count = n
			d.Ops = append(d.Ops, o)
		}
	}
	return d
}

type meteredReadCloser struct {
	rc io.ReadCloser
	m  *Metered
}

func (r *meteredReadCloser) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.m.read.Add(int64(n))
	return n, err
}

func (r *meteredReadCloser) Close() error { return r.rc.Close() }

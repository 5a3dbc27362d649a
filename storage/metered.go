package storage

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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

type plyKey struct{}

// WithPly attributes the storage calls made with ctx to a ply (of the
// message being handled), so that a Metered backend can count each ply's
// transactions besides their category.
func WithPly(ctx context.Context, ply int) context.Context {
	return context.WithValue(ctx, plyKey{}, ply)
}

// PlyFrom returns the ply set by WithPly; ok is false if none was.
func PlyFrom(ctx context.Context) (ply int, ok bool) {
	ply, ok = ctx.Value(plyKey{}).(int)
	return ply, ok
}

type plyOfMessageKey struct{}

// WithPlyOfMessage makes the dequeues made with ctx their message's
// ply's: a worker cannot know a message's ply before it has it, so a
// Metered backend asks plyOf of the text of the one message a Dequeue
// returned, and counts the call in that ply (not in a handling of it).
// A dequeue that returns nothing, or a message plyOf names no ply of,
// belongs to no ply.
func WithPlyOfMessage(ctx context.Context, plyOf func(text string) (ply int, ok bool)) context.Context {
	return context.WithValue(ctx, plyOfMessageKey{}, plyOf)
}

// dequeuedPly is the ply that call c, a Dequeue made with a context from
// WithPlyOfMessage, counts in.
func dequeuedPly(c *Call) (int, bool) {
	plyOf, _ := c.Ctx.Value(plyOfMessageKey{}).(func(string) (int, bool))
	if c.Op != QueueDequeue || plyOf == nil || len(c.Messages) != 1 {
		return 0, false
	}
	return plyOf(c.Messages[0].Text)
}

// counters holds one category's, or one ply's, transaction counts.
type counters [numOperations]atomic.Int64

// plyCounters holds one ply's counts: its transactions, the table
// entities they read, its handlings and the most one of them cost.
type plyCounters struct {
	ops                       counters
	entities, tasks           atomic.Int64
	maxTx, maxEnt, maxTaskDur atomic.Int64 // maxTaskDur in nanoseconds
	kinds                     sync.Map     // a handling's kind -> *kindCounters
}

// kindCounters are the counts of one kind of handling of one ply
// (KindStat).
type kindCounters struct{ handlings, tx, ent, maxTx, maxEnt atomic.Int64 }

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
	plies   sync.Map // ply int -> *plyCounters: the same calls again, by ply

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

// NewMeteredAccounts meters a backend built over several storage
// accounts (storage/spread): join builds it from the accounts, each
// already metered, so that a call it fans out to every account (a
// listing, a container's creation) counts once for each account, as
// Azure bills it, where NewMetered around the joined backend would count
// it once.
func NewMeteredAccounts(accounts []Backend, join func([]Backend) (Backend, error)) (*Metered, error) {
	m := &Metered{}
	metered := make([]Backend, len(accounts))
	for i, a := range accounts {
		metered[i] = Wrap(a, m.meter)
	}
	joined, err := join(metered)
	if err != nil {
		return nil, err
	}
	m.inner, m.wrapped = joined, joined
	return m, nil
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
	n := bill(m.counters(c.Ctx), c)
	entities := int64(0)
	if c.Op == TableGet || c.Op == TableQuery {
		entities = int64(c.Items)
	}
	if ply, ok := PlyFrom(c.Ctx); ok {
		pc := m.plyCounters(ply)
		bill(&pc.ops, c)
		pc.entities.Add(entities)
	} else if ply, ok := dequeuedPly(c); ok {
		bill(&m.plyCounters(ply).ops, c)
	}
	if h := handlingFrom(c.Ctx); h != nil {
		m.countHandling(h, n, entities)
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

// bill counts the transactions of call c in ctr and returns how many
// there were.
func bill(ctr *counters, c *Call) int64 {
	switch c.Op {
	case BlobList:
		n := max(1, (int64(c.Items)+ListPageSize-1)/ListPageSize)
		ctr[BlobList].Add(n)
		return n
	case BlobUpload:
		if c.Sent <= SingleUploadBytes {
			ctr[BlobUpload].Add(1)
			return 1
		}
		blocks := (c.Sent + UploadBlockBytes - 1) / UploadBlockBytes
		ctr[BlobPutBlock].Add(blocks)
		ctr[BlobPutBlockList].Add(1)
		return blocks + 1
	default:
		ctr[c.Op].Add(1)
		return 1
	}
}

// countHandling adds one call's transactions and entities read to
// handling h, unless another meter counts h, and raises the maxima of
// h's ply to what h has cost so far.
func (m *Metered) countHandling(h *Handling, transactions, entities int64) {
	counts, first := h.claim(m)
	if !counts {
		return
	}
	pc := m.plyCounters(h.ply)
	if first {
		pc.tasks.Add(1)
	}
	tx, ent := h.transactions.Add(transactions), h.entities.Add(entities)
	storeMax(&pc.maxTx, tx)
	storeMax(&pc.maxEnt, ent)
	storeMax(&pc.maxTaskDur, int64(time.Since(h.start)))
	v, ok := pc.kinds.Load(h.kind)
	if !ok {
		v, _ = pc.kinds.LoadOrStore(h.kind, new(kindCounters))
	}
	kc := v.(*kindCounters)
	if first {
		kc.handlings.Add(1)
	}
	kc.tx.Add(transactions)
	kc.ent.Add(entities)
	storeMax(&kc.maxTx, tx)
	storeMax(&kc.maxEnt, ent)
}

func (m *Metered) plyCounters(ply int) *plyCounters {
	if v, ok := m.plies.Load(ply); ok {
		return v.(*plyCounters)
	}
	v, _ := m.plies.LoadOrStore(ply, new(plyCounters))
	return v.(*plyCounters)
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
// operation, category) with a non-zero count, sorted in that order, and
// one PlyStat per ply with calls, in ply order.
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
	m.plies.Range(func(k, v any) bool {
		pc := v.(*plyCounters)
		ps := PlyStat{Ply: k.(int), Ops: map[string]int64{},
			EntityReads: pc.entities.Load(), Tasks: pc.tasks.Load(),
			MaxTaskTransactions: pc.maxTx.Load(), MaxTaskEntities: pc.maxEnt.Load(),
			MaxTaskSeconds: time.Duration(pc.maxTaskDur.Load()).Seconds()}
		pc.kinds.Range(func(k, v any) bool {
			kc := v.(*kindCounters)
			if ps.ByKind == nil {
				ps.ByKind = map[string]KindStat{}
			}
			ps.ByKind[k.(string)] = KindStat{Handlings: kc.handlings.Load(), Transactions: kc.tx.Load(), EntityReads: kc.ent.Load(),
				MaxTransactions: kc.maxTx.Load(), MaxEntities: kc.maxEnt.Load()}
			return true
		})
		for o := range numOperations {
			if n := pc.ops[o].Load(); n != 0 {
				ps.Ops[o.String()] = n
			}
		}
		s.Plies = append(s.Plies, ps)
		return true
	})
	sortPlies(s.Plies)
	return s
}

func sortPlies(plies []PlyStat) {
	slices.SortFunc(plies, func(a, b PlyStat) int { return cmp.Compare(a.Ply, b.Ply) })
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
// The plies' maxima are s's: those of the interval alone are not known.
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
	d.Plies = combinePlies(s.Plies, prev.Plies, -1)
	return d
}

// Add returns the transactions and bytes of s and t together: of two
// processes, say. The plies' counts add up; their maxima are the larger.
func (s Stats) Add(t Stats) Stats {
	type key struct{ service, op, cat string }
	at := map[key]int{}
	out := Stats{BytesWritten: s.BytesWritten + t.BytesWritten, BytesRead: s.BytesRead + t.BytesRead}
	for _, o := range slices.Concat(s.Ops, t.Ops) {
		k := key{o.Service, o.Operation, o.Category}
		if i, ok := at[k]; ok {
			out.Ops[i].Count += o.Count
			continue
		}
		at[k] = len(out.Ops)
		out.Ops = append(out.Ops, o)
	}
	sortOps(out.Ops)
	out.Plies = combinePlies(s.Plies, t.Plies, 1)
	return out
}

// combinePlies adds sign times b's per-ply counts to a's, leaving out
// zeros, and takes the larger of a's and b's maxima when sign is 1, a's
// otherwise; the result is in ply order and shares no map with a or b.
func combinePlies(a, b []PlyStat, sign int64) []PlyStat {
	byPly := map[int]*PlyStat{}
	for i, side := range [][]PlyStat{a, b} {
		f := int64(1)
		if i == 1 {
			f = sign
		}
		for _, p := range side {
			q := byPly[p.Ply]
			if q == nil {
				q = &PlyStat{Ply: p.Ply, Ops: map[string]int64{}}
				byPly[p.Ply] = q
			}
			for op, n := range p.Ops {
				if q.Ops[op] += f * n; q.Ops[op] == 0 {
					delete(q.Ops, op)
				}
			}
			q.EntityReads += f * p.EntityReads
			q.Tasks += f * p.Tasks
			if f == 1 {
				q.MaxTaskTransactions = max(q.MaxTaskTransactions, p.MaxTaskTransactions)
				q.MaxTaskEntities = max(q.MaxTaskEntities, p.MaxTaskEntities)
				q.MaxTaskSeconds = max(q.MaxTaskSeconds, p.MaxTaskSeconds)
			}
			for k, m := range p.ByKind {
				if q.ByKind == nil {
					q.ByKind = map[string]KindStat{}
				}
				if q.ByKind[k] = q.ByKind[k].add(m, f); q.ByKind[k].Handlings == 0 && q.ByKind[k].Transactions == 0 {
					delete(q.ByKind, k) // none in the difference
				}
			}
		}
	}
	var out []PlyStat
	for _, q := range byPly {
		if len(q.Ops) > 0 || q.Tasks != 0 || q.EntityReads != 0 {
			out = append(out, *q)
		}
	}
	sortPlies(out)
	return out
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

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

// op identifies one billed operation kind. The names follow the methods of
// the interfaces in this package, except for the requests a streamed
// upload is made of, which carry Azure's names.
type op uint8

const (
	opQueueCreate op = iota
	opQueueDrop
	opQueueEnqueue
	opQueueDequeue
	opQueueUpdateVisibility
	opQueueDelete
	opQueueApproximateLength
	opQueuePeek
	opBlobCreate
	opBlobDrop
	opBlobPutNew
	opBlobPut
	opBlobUpload       // an upload small enough for one Put Blob request
	opBlobPutBlock     // one staged block of a larger upload
	opBlobPutBlockList // the commit of a staged upload
	opBlobGet
	opBlobOpen
	opBlobDelete
	opBlobList
	opTableCreate
	opTableDrop
	opTableAdd
	opTableUpsert
	opTableUpdate
	opTableDelete
	opTableGet
	opTableQuery
	opTableTransact
	numOps
)

var opNames = [numOps]struct{ service, name string }{
	opQueueCreate:            {ServiceQueue, "create"},
	opQueueDrop:              {ServiceQueue, "drop"},
	opQueueEnqueue:           {ServiceQueue, "enqueue"},
	opQueueDequeue:           {ServiceQueue, "dequeue"},
	opQueueUpdateVisibility:  {ServiceQueue, "update_visibility"},
	opQueueDelete:            {ServiceQueue, "delete"},
	opQueueApproximateLength: {ServiceQueue, "approximate_length"},
	opQueuePeek:              {ServiceQueue, "peek"},
	opBlobCreate:             {ServiceBlob, "create"},
	opBlobDrop:               {ServiceBlob, "drop"},
	opBlobPutNew:             {ServiceBlob, "put_new"},
	opBlobPut:                {ServiceBlob, "put"},
	opBlobUpload:             {ServiceBlob, "upload"},
	opBlobPutBlock:           {ServiceBlob, "put_block"},
	opBlobPutBlockList:       {ServiceBlob, "put_block_list"},
	opBlobGet:                {ServiceBlob, "get"},
	opBlobOpen:               {ServiceBlob, "open"},
	opBlobDelete:             {ServiceBlob, "delete"},
	opBlobList:               {ServiceBlob, "list"},
	opTableCreate:            {ServiceTable, "create"},
	opTableDrop:              {ServiceTable, "drop"},
	opTableAdd:               {ServiceTable, "add"},
	opTableUpsert:            {ServiceTable, "upsert"},
	opTableUpdate:            {ServiceTable, "update"},
	opTableDelete:            {ServiceTable, "delete"},
	opTableGet:               {ServiceTable, "get"},
	opTableQuery:             {ServiceTable, "query"},
	opTableTransact:          {ServiceTable, "transact"},
}

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
type counters [numOps]atomic.Int64

// Metered wraps a Backend and counts its calls as Azure bills them: one
// transaction per request, every page of a query or listing and every
// staged block included. Because every backend is wrapped the same way,
// the counts mean the same thing whatever the backend.
//
// Calls rejected with ErrInvalid are not counted: backends check Azure's
// limits client-side, so those requests never reach the service. Every
// other call, failed or not, is counted, since Azure bills failed requests.
type Metered struct {
	b    Backend
	base counters // calls without a category: the common case, found without a map lookup
	cats sync.Map // category string -> *counters

	written atomic.Int64
	read    atomic.Int64
}

var _ Backend = (*Metered)(nil)

// NewMetered wraps b. Counting is lock-free, so the wrapper may be shared
// by any number of goroutines.
func NewMetered(b Backend) *Metered { return &Metered{b: b} }

// Unwrap returns the wrapped backend.
func (m *Metered) Unwrap() Backend { return m.b }

// Queue returns a metered handle on the named queue.
func (m *Metered) Queue(name string) Queue { return meteredQueue{m.b.Queue(name), m} }

// Container returns a metered handle on the named container.
func (m *Metered) Container(name string) Container {
	return meteredContainer{m.b.Container(name), m}
}

// Table returns a metered handle on the named table.
func (m *Metered) Table(name string) Table { return meteredTable{m.b.Table(name), m} }

// Close closes the wrapped backend. The counts stay readable.
func (m *Metered) Close() error { return m.b.Close() }

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

// count records n transactions of kind o unless err says the request was
// refused before it was sent.
func (m *Metered) count(ctx context.Context, o op, n int64, err error) {
	if n == 0 || (err != nil && errors.Is(err, ErrInvalid)) {
		return
	}
	m.counters(ctx)[o].Add(n)
}

// Stats returns a snapshot of the counts, one OpStat per (service,
// operation, category) with a non-zero count, sorted in that order.
// Counts taken while calls are under way are each exact but not mutually
// consistent; take Stats when the work being measured is done.
func (m *Metered) Stats() Stats {
	s := Stats{BytesWritten: m.written.Load(), BytesRead: m.read.Load()}
	add := func(cat string, c *counters) {
		for o := range numOps {
			if n := c[o].Load(); n != 0 {
				s.Ops = append(s.Ops, OpStat{
					Service: opNames[o].service, Operation: opNames[o].name,
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

type meteredQueue struct {
	q Queue
	m *Metered
}

func (w meteredQueue) Name() string { return w.q.Name() }

func (w meteredQueue) Create(ctx context.Context) error {
	err := w.q.Create(ctx)
	w.m.count(ctx, opQueueCreate, 1, err)
	return err
}

func (w meteredQueue) Drop(ctx context.Context) error {
	err := w.q.Drop(ctx)
	w.m.count(ctx, opQueueDrop, 1, err)
	return err
}

func (w meteredQueue) Enqueue(ctx context.Context, text string, opts EnqueueOptions) (Receipt, error) {
	r, err := w.q.Enqueue(ctx, text, opts)
	w.m.count(ctx, opQueueEnqueue, 1, err)
	if err == nil {
		w.m.written.Add(int64(len(text)))
	}
	return r, err
}

func (w meteredQueue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]Message, error) {
	msgs, err := w.q.Dequeue(ctx, max, visibility)
	w.m.count(ctx, opQueueDequeue, 1, err)
	w.m.read.Add(textBytes(msgs))
	return msgs, err
}

func (w meteredQueue) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	r, err := w.q.UpdateVisibility(ctx, id, popReceipt, visibility)
	w.m.count(ctx, opQueueUpdateVisibility, 1, err)
	return r, err
}

func (w meteredQueue) Delete(ctx context.Context, id, popReceipt string) error {
	err := w.q.Delete(ctx, id, popReceipt)
	w.m.count(ctx, opQueueDelete, 1, err)
	return err
}

func (w meteredQueue) ApproximateLength(ctx context.Context) (int, error) {
	n, err := w.q.ApproximateLength(ctx)
	w.m.count(ctx, opQueueApproximateLength, 1, err)
	return n, err
}

func (w meteredQueue) Peek(ctx context.Context, max int) ([]Message, error) {
	msgs, err := w.q.Peek(ctx, max)
	w.m.count(ctx, opQueuePeek, 1, err)
	w.m.read.Add(textBytes(msgs))
	return msgs, err
}

func textBytes(msgs []Message) int64 {
	var n int64
	for i := range msgs {
		n += int64(len(msgs[i].Text))
	}
	return n
}

type meteredContainer struct {
	c Container
	m *Metered
}

func (w meteredContainer) Name() string { return w.c.Name() }

func (w meteredContainer) Create(ctx context.Context) error {
	err := w.c.Create(ctx)
	w.m.count(ctx, opBlobCreate, 1, err)
	return err
}

func (w meteredContainer) Drop(ctx context.Context) error {
	err := w.c.Drop(ctx)
	w.m.count(ctx, opBlobDrop, 1, err)
	return err
}

func (w meteredContainer) PutNew(ctx context.Context, name string, data []byte) error {
	err := w.c.PutNew(ctx, name, data)
	w.m.count(ctx, opBlobPutNew, 1, err)
	if err == nil {
		w.m.written.Add(int64(len(data)))
	}
	return err
}

func (w meteredContainer) Put(ctx context.Context, name string, data []byte) error {
	err := w.c.Put(ctx, name, data)
	w.m.count(ctx, opBlobPut, 1, err)
	if err == nil {
		w.m.written.Add(int64(len(data)))
	}
	return err
}

// Upload is billed by the bytes that flowed through r: one Put Blob if
// they fit in SingleUploadBytes, else one Put Block per UploadBlockBytes
// and a Put Block List to commit them.
func (w meteredContainer) Upload(ctx context.Context, name string, r io.Reader) error {
	cr := &countingReader{r: r}
	err := w.c.Upload(ctx, name, cr)
	n := cr.n.Load()
	if n <= SingleUploadBytes {
		w.m.count(ctx, opBlobUpload, 1, err)
	} else {
		w.m.count(ctx, opBlobPutBlock, (n+UploadBlockBytes-1)/UploadBlockBytes, err)
		w.m.count(ctx, opBlobPutBlockList, 1, err)
	}
	if err == nil {
		w.m.written.Add(n)
	}
	return err
}

func (w meteredContainer) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := w.c.Get(ctx, name)
	w.m.count(ctx, opBlobGet, 1, err)
	w.m.read.Add(int64(len(data)))
	return data, err
}

// Open is one request however the body is read; the bytes are counted as
// the caller reads them.
func (w meteredContainer) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	rc, err := w.c.Open(ctx, name, offset, length)
	w.m.count(ctx, opBlobOpen, 1, err)
	if err != nil {
		return nil, err
	}
	return &meteredReadCloser{rc: rc, m: w.m}, nil
}

func (w meteredContainer) Delete(ctx context.Context, name string) error {
	err := w.c.Delete(ctx, name)
	w.m.count(ctx, opBlobDelete, 1, err)
	return err
}

func (w meteredContainer) List(ctx context.Context, prefix string) ([]BlobInfo, error) {
	blobs, err := w.c.List(ctx, prefix)
	pages := max(1, (int64(len(blobs))+ListPageSize-1)/ListPageSize)
	w.m.count(ctx, opBlobList, pages, err)
	return blobs, err
}

// countingReader counts the bytes a backend pulls through it. The count is
// atomic because a backend may read from a goroutine of its own.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
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

type meteredTable struct {
	t Table
	m *Metered
}

func (w meteredTable) Name() string { return w.t.Name() }

func (w meteredTable) Create(ctx context.Context) error {
	err := w.t.Create(ctx)
	w.m.count(ctx, opTableCreate, 1, err)
	return err
}

func (w meteredTable) Drop(ctx context.Context) error {
	err := w.t.Drop(ctx)
	w.m.count(ctx, opTableDrop, 1, err)
	return err
}

func (w meteredTable) Add(ctx context.Context, e Entity) (string, error) {
	etag, err := w.t.Add(ctx, e)
	w.m.count(ctx, opTableAdd, 1, err)
	return etag, err
}

func (w meteredTable) Upsert(ctx context.Context, e Entity) (string, error) {
	etag, err := w.t.Upsert(ctx, e)
	w.m.count(ctx, opTableUpsert, 1, err)
	return etag, err
}

func (w meteredTable) Update(ctx context.Context, e Entity, etag string) (string, error) {
	etag, err := w.t.Update(ctx, e, etag)
	w.m.count(ctx, opTableUpdate, 1, err)
	return etag, err
}

func (w meteredTable) Delete(ctx context.Context, pk, rk, etag string) error {
	err := w.t.Delete(ctx, pk, rk, etag)
	w.m.count(ctx, opTableDelete, 1, err)
	return err
}

func (w meteredTable) Get(ctx context.Context, pk, rk string) (Entity, error) {
	e, err := w.t.Get(ctx, pk, rk)
	w.m.count(ctx, opTableGet, 1, err)
	return e, err
}

func (w meteredTable) Query(ctx context.Context, pk string, opts QueryOptions) (Page, error) {
	p, err := w.t.Query(ctx, pk, opts)
	w.m.count(ctx, opTableQuery, 1, err)
	return p, err
}

func (w meteredTable) Transact(ctx context.Context, pk string, ops []Op) ([]string, error) {
	etags, err := w.t.Transact(ctx, pk, ops)
	w.m.count(ctx, opTableTransact, 1, err)
	return etags, err
}

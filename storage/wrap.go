package storage

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// Operation names one kind of storage call: a method of Queue, Container
// or Table, or one of the requests a streamed upload is billed as. Its
// service and name are what Stats reports and what fault plans name.
type Operation uint8

// Operations, one per method of the handle interfaces, in their order.
const (
	QueueCreate Operation = iota
	QueueDrop
	QueueEnqueue
	QueueDequeue
	QueueUpdateVisibility
	QueueDelete
	QueueApproximateLength
	QueuePeek
	BlobCreate
	BlobDrop
	BlobPutNew
	BlobPut
	BlobUpload       // a call of Upload, billed as one Put Blob if it is small enough
	BlobPutBlock     // not a call: one staged block of a larger upload, as billed
	BlobPutBlockList // not a call: the commit of a staged upload, as billed
	BlobGet
	BlobOpen
	BlobDelete
	BlobList
	TableCreate
	TableDrop
	TableAdd
	TableUpsert
	TableUpdate
	TableDelete
	TableGet
	TableQuery
	TableTransact
	numOperations
)

var operations = [numOperations]struct{ service, name, full string }{
	QueueCreate:            {ServiceQueue, "create", "queue.create"},
	QueueDrop:              {ServiceQueue, "drop", "queue.drop"},
	QueueEnqueue:           {ServiceQueue, "enqueue", "queue.enqueue"},
	QueueDequeue:           {ServiceQueue, "dequeue", "queue.dequeue"},
	QueueUpdateVisibility:  {ServiceQueue, "update_visibility", "queue.update_visibility"},
	QueueDelete:            {ServiceQueue, "delete", "queue.delete"},
	QueueApproximateLength: {ServiceQueue, "approximate_length", "queue.approximate_length"},
	QueuePeek:              {ServiceQueue, "peek", "queue.peek"},
	BlobCreate:             {ServiceBlob, "create", "blob.create"},
	BlobDrop:               {ServiceBlob, "drop", "blob.drop"},
	BlobPutNew:             {ServiceBlob, "put_new", "blob.put_new"},
	BlobPut:                {ServiceBlob, "put", "blob.put"},
	BlobUpload:             {ServiceBlob, "upload", "blob.upload"},
	BlobPutBlock:           {ServiceBlob, "put_block", "blob.put_block"},
	BlobPutBlockList:       {ServiceBlob, "put_block_list", "blob.put_block_list"},
	BlobGet:                {ServiceBlob, "get", "blob.get"},
	BlobOpen:               {ServiceBlob, "open", "blob.open"},
	BlobDelete:             {ServiceBlob, "delete", "blob.delete"},
	BlobList:               {ServiceBlob, "list", "blob.list"},
	TableCreate:            {ServiceTable, "create", "table.create"},
	TableDrop:              {ServiceTable, "drop", "table.drop"},
	TableAdd:               {ServiceTable, "add", "table.add"},
	TableUpsert:            {ServiceTable, "upsert", "table.upsert"},
	TableUpdate:            {ServiceTable, "update", "table.update"},
	TableDelete:            {ServiceTable, "delete", "table.delete"},
	TableGet:               {ServiceTable, "get", "table.get"},
	TableQuery:             {ServiceTable, "query", "table.query"},
	TableTransact:          {ServiceTable, "transact", "table.transact"},
}

// Service is ServiceQueue, ServiceBlob or ServiceTable.
func (o Operation) Service() string { return operations[o].service }

// Name is the operation's name within its service, such as "enqueue".
func (o Operation) Name() string { return operations[o].name }

// String is the service and the name, such as "queue.enqueue".
func (o Operation) String() string { return operations[o].full }

// Call is one storage call as a Middleware sees it. Wrap fills in the
// request fields before the middleware runs and the response fields as
// the wrapped backend returns, before next returns.
type Call struct {
	Op Operation
	// Resource is the name of the queue, container or table.
	Resource string
	// Partition is the PartitionKey a table call reads or writes (every
	// table call but Create and Drop; it may be empty, as keys may).
	Partition string
	// Ctx is the caller's context; a middleware may replace it before
	// calling next, and the wrapped backend is called with it.
	Ctx context.Context
	// Delay is the initial invisibility of an Enqueue.
	Delay time.Duration
	// Receipt is the message an UpdateVisibility or Delete names, with
	// the new pop receipt once UpdateVisibility succeeded, or the message
	// an Enqueue made.
	Receipt Receipt
	// Messages are what Dequeue or Peek returned.
	Messages []Message
	// Items counts the messages Dequeue or Peek returned, the blobs List
	// returned, the entities of a Query page or a Get (one, when found),
	// or the operations of a Transact.
	Items int
	// Sent counts the payload bytes the call wrote: message text, blob
	// data; for Upload, the bytes the backend read from the caller.
	Sent int64
	// Received counts the payload bytes the call read: message texts of
	// Dequeue and Peek, the data of Get. Open's data is read later,
	// through Body.
	Received int64
	// Body is the stream Open returned; a middleware may replace it with
	// a wrapper of its own.
	Body io.ReadCloser
}

// Middleware intercepts one call made through Wrap. It performs the call
// by calling next, at most once, and returns the error the caller sees: it
// may fail a call without performing it, or after. Whenever it returns an
// error, the caller gets zero results with it.
type Middleware func(c *Call, next func() error) error

// Wrap returns b with every call of its queues, containers and tables
// passed through mw. Name and Close are not intercepted.
func Wrap(b Backend, mw Middleware) Backend { return &wrapped{b: b, mw: mw} }

type wrapped struct {
	b  Backend
	mw Middleware
}

func (w *wrapped) Queue(name string) Queue {
	return wrappedQueue{handle[Queue]{w.b.Queue(name), w.mw, QueueCreate, QueueDrop}}
}

func (w *wrapped) Container(name string) Container {
	return wrappedContainer{handle[Container]{w.b.Container(name), w.mw, BlobCreate, BlobDrop}}
}

func (w *wrapped) Table(name string) Table {
	return wrappedTable{handle[Table]{w.b.Table(name), w.mw, TableCreate, TableDrop}}
}

// handle is what the three wrapped handles share: the wrapped handle h,
// the middleware, and the operations of h's Create and Drop.
type handle[H interface {
	Name() string
	Create(ctx context.Context) error
	Drop(ctx context.Context) error
}] struct {
	h            H
	mw           Middleware
	create, drop Operation
}

func (w handle[H]) call(ctx context.Context, op Operation) *Call {
	return &Call{Op: op, Resource: w.h.Name(), Ctx: ctx}
}

func (w handle[H]) Name() string { return w.h.Name() }

func (w handle[H]) Create(ctx context.Context) error {
	return run0(w.mw, w.call(ctx, w.create), w.h.Create)
}

func (w handle[H]) Drop(ctx context.Context) error {
	return run0(w.mw, w.call(ctx, w.drop), w.h.Drop)
}

func (w *wrapped) Close() error { return w.b.Close() }

// run passes one call through mw; do performs it with the context mw
// chose. On failure the result is the zero value, whatever do returned.
func run[T any](mw Middleware, c *Call, do func(ctx context.Context) (T, error)) (T, error) {
	var v T
	err := mw(c, func() error {
		var err error
		v, err = do(c.Ctx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// run0 is run for calls that return only an error.
func run0(mw Middleware, c *Call, do func(ctx context.Context) error) error {
	return mw(c, func() error { return do(c.Ctx) })
}

type wrappedQueue struct{ handle[Queue] }

func (w wrappedQueue) Enqueue(ctx context.Context, text string, opts EnqueueOptions) (Receipt, error) {
	c := w.call(ctx, QueueEnqueue)
	c.Delay, c.Sent = opts.Delay, int64(len(text))
	return run(w.mw, c, func(ctx context.Context) (Receipt, error) {
		r, err := w.h.Enqueue(ctx, text, opts)
		c.Receipt = r
		return r, err
	})
}

func (w wrappedQueue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]Message, error) {
	c := w.call(ctx, QueueDequeue)
	return run(w.mw, c, func(ctx context.Context) ([]Message, error) {
		msgs, err := w.h.Dequeue(ctx, max, visibility)
		c.setMessages(msgs)
		return msgs, err
	})
}

func (c *Call) setMessages(msgs []Message) {
	c.Messages, c.Items = msgs, len(msgs)
	for i := range msgs {
		c.Received += int64(len(msgs[i].Text))
	}
}

func (w wrappedQueue) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	c := w.call(ctx, QueueUpdateVisibility)
	c.Receipt = Receipt{ID: id, PopReceipt: popReceipt}
	return run(w.mw, c, func(ctx context.Context) (string, error) {
		r, err := w.h.UpdateVisibility(ctx, id, popReceipt, visibility)
		if err == nil {
			c.Receipt.PopReceipt = r
		}
		return r, err
	})
}

func (w wrappedQueue) Delete(ctx context.Context, id, popReceipt string) error {
	c := w.call(ctx, QueueDelete)
	c.Receipt = Receipt{ID: id, PopReceipt: popReceipt}
	return run0(w.mw, c, func(ctx context.Context) error { return w.h.Delete(ctx, id, popReceipt) })
}

func (w wrappedQueue) ApproximateLength(ctx context.Context) (int, error) {
	return run(w.mw, w.call(ctx, QueueApproximateLength), w.h.ApproximateLength)
}

func (w wrappedQueue) Peek(ctx context.Context, max int) ([]Message, error) {
	c := w.call(ctx, QueuePeek)
	return run(w.mw, c, func(ctx context.Context) ([]Message, error) {
		msgs, err := w.h.Peek(ctx, max)
		c.setMessages(msgs)
		return msgs, err
	})
}

type wrappedContainer struct{ handle[Container] }

func (w wrappedContainer) PutNew(ctx context.Context, name string, data []byte) error {
	c := w.call(ctx, BlobPutNew)
	c.Sent = int64(len(data))
	return run0(w.mw, c, func(ctx context.Context) error { return w.h.PutNew(ctx, name, data) })
}

func (w wrappedContainer) Put(ctx context.Context, name string, data []byte) error {
	c := w.call(ctx, BlobPut)
	c.Sent = int64(len(data))
	return run0(w.mw, c, func(ctx context.Context) error { return w.h.Put(ctx, name, data) })
}

func (w wrappedContainer) Upload(ctx context.Context, name string, r io.Reader) error {
	c := w.call(ctx, BlobUpload)
	return run0(w.mw, c, func(ctx context.Context) error {
		cr := &countingReader{r: r}
		err := w.h.Upload(ctx, name, cr)
		c.Sent = cr.n.Load()
		return err
	})
}

func (w wrappedContainer) Get(ctx context.Context, name string) ([]byte, error) {
	c := w.call(ctx, BlobGet)
	return run(w.mw, c, func(ctx context.Context) ([]byte, error) {
		data, err := w.h.Get(ctx, name)
		c.Received = int64(len(data))
		return data, err
	})
}

// Open closes the stream of a call that failed after the backend opened
// it: the caller, who sees only the error, cannot.
func (w wrappedContainer) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	c := w.call(ctx, BlobOpen)
	err := w.mw(c, func() error {
		var err error
		c.Body, err = w.h.Open(c.Ctx, name, offset, length)
		return err
	})
	if err != nil {
		if c.Body != nil {
			c.Body.Close()
		}
		return nil, err
	}
	return c.Body, nil
}

func (w wrappedContainer) Delete(ctx context.Context, name string) error {
	return run0(w.mw, w.call(ctx, BlobDelete), func(ctx context.Context) error { return w.h.Delete(ctx, name) })
}

func (w wrappedContainer) List(ctx context.Context, prefix string) ([]BlobInfo, error) {
	c := w.call(ctx, BlobList)
	return run(w.mw, c, func(ctx context.Context) ([]BlobInfo, error) {
		blobs, err := w.h.List(ctx, prefix)
		c.Items = len(blobs)
		return blobs, err
	})
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

// WriteTo lets io.Copy (and an io.MultiReader's WriteTo) hand the stream
// to w whole where the reader under it can (a bytes.Reader, as the
// pipeline's uploads are), so that a backend writing it to a file makes
// one system call, not one for every 32 KiB of io.Copy's buffer.
func (c *countingReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	var err error
	if wt, ok := c.r.(io.WriterTo); ok {
		n, err = wt.WriteTo(w)
	} else {
		n, err = io.Copy(w, struct{ io.Reader }{c.r})
	}
	c.n.Add(n)
	return n, err
}

type wrappedTable struct{ handle[Table] }

// entityCall is the Call of a table operation on partition pk.
func (w wrappedTable) entityCall(ctx context.Context, op Operation, pk string) *Call {
	c := w.call(ctx, op)
	c.Partition = pk
	return c
}

func (w wrappedTable) Add(ctx context.Context, e Entity) (string, error) {
	return run(w.mw, w.entityCall(ctx, TableAdd, e.PartitionKey), func(ctx context.Context) (string, error) { return w.h.Add(ctx, e) })
}

func (w wrappedTable) Upsert(ctx context.Context, e Entity) (string, error) {
	return run(w.mw, w.entityCall(ctx, TableUpsert, e.PartitionKey), func(ctx context.Context) (string, error) { return w.h.Upsert(ctx, e) })
}

func (w wrappedTable) Update(ctx context.Context, e Entity, etag string) (string, error) {
	return run(w.mw, w.entityCall(ctx, TableUpdate, e.PartitionKey), func(ctx context.Context) (string, error) { return w.h.Update(ctx, e, etag) })
}

func (w wrappedTable) Delete(ctx context.Context, pk, rk, etag string) error {
	return run0(w.mw, w.entityCall(ctx, TableDelete, pk), func(ctx context.Context) error { return w.h.Delete(ctx, pk, rk, etag) })
}

func (w wrappedTable) Get(ctx context.Context, pk, rk string) (Entity, error) {
	c := w.entityCall(ctx, TableGet, pk)
	return run(w.mw, c, func(ctx context.Context) (Entity, error) {
		e, err := w.h.Get(ctx, pk, rk)
		if err == nil {
			c.Items = 1
		}
		return e, err
	})
}

func (w wrappedTable) Query(ctx context.Context, pk string, opts QueryOptions) (Page, error) {
	c := w.entityCall(ctx, TableQuery, pk)
	return run(w.mw, c, func(ctx context.Context) (Page, error) {
		p, err := w.h.Query(ctx, pk, opts)
		c.Items = len(p.Entities)
		return p, err
	})
}

func (w wrappedTable) Transact(ctx context.Context, pk string, ops []Op) ([]string, error) {
	c := w.entityCall(ctx, TableTransact, pk)
	c.Items = len(ops)
	return run(w.mw, c, func(ctx context.Context) ([]string, error) { return w.h.Transact(ctx, pk, ops) })
}

// Package storage defines the small set of queue, blob and table operations
// the system uses, with the semantics of Azure Storage. Backends live in
// their own packages (storage/azure, storage/embedded); nothing above this
// package sees a backend's own types or errors.
package storage

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"
)

// MaxAccounts bounds the storage accounts that one process opens
// (azure.ConfigsFromEnv) and that a run spreads its data over.
const MaxAccounts = 64

// Sentinel errors. Backends convert their own errors into these at the
// boundary, so callers test with errors.Is.
var (
	// ErrNotFound: the queue message, blob, entity, queue, container or table does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrExists: a create-only-if-absent operation found the item already there.
	ErrExists = errors.New("storage: already exists")
	// ErrPreconditionFailed: an ETag condition did not hold.
	ErrPreconditionFailed = errors.New("storage: precondition failed")
	// ErrLeaseLost: a queue pop receipt is stale; another consumer owns the message now.
	ErrLeaseLost = errors.New("storage: lease lost")
	// ErrInvalid: the request breaks one of Azure's limits or naming rules.
	// Backends check these client-side, even where an emulator is lax.
	ErrInvalid = errors.New("storage: invalid request")
	// ErrTransient: a failure worth retrying (timeout, throttling, 5xx) that
	// outlived the backend's own retries.
	ErrTransient = errors.New("storage: transient failure")
	// ErrThrottled: the service refused the call for load (Azure's 503
	// Server Busy, 500 Operation Timeout, 429) through the backend's own
	// retries, or a rate limit refused it. It always comes with
	// ErrTransient: the caller retries, later.
	ErrThrottled = errors.New("storage: throttled")
)

// Azure's limits, enforced by every backend.
const (
	MaxMessageBytes   = 64 * 1024       // queue message text, in bytes
	MaxDequeue        = 32              // messages per Dequeue call
	MaxBatchOps       = 100             // operations per entity group transaction
	MaxBatchBytes     = 4 * 1024 * 1024 // payload of one entity group transaction
	MaxEntityBytes    = 1024 * 1024     // one entity
	MaxPropertyBytes  = 64 * 1024       // one string or binary property
	MaxProperties     = 252             // custom properties per entity
	MaxKeyBytes       = 1024            // PartitionKey or RowKey
	MaxVisibility     = 7 * 24 * time.Hour
	UploadBlockBytes  = 4 * 1024 * 1024 // streamed uploads are staged in blocks of this size
	SingleUploadBytes = UploadBlockBytes
)

// AnyETag matches any existing entity in Update and Delete.
const AnyETag = "*"

// Backend opens handles on named queues, containers and tables. Handles are
// cheap; creating the resource itself is a separate, idempotent call.
type Backend interface {
	Queue(name string) Queue
	Container(name string) Container
	Table(name string) Table
	Close() error
}

// Message is one dequeued queue message.
type Message struct {
	ID           string
	PopReceipt   string
	DequeueCount int64
	Text         string
	InsertedAt   time.Time
}

// Receipt identifies an enqueued message to its sender: the ID and the
// pop receipt Azure returns from Put Message.
type Receipt struct {
	ID         string
	PopReceipt string
}

// EnqueueOptions controls a new message. Zero values mean: visible at once,
// and Azure's default time-to-live of seven days.
type EnqueueOptions struct {
	Delay time.Duration // initial visibility delay
	TTL   time.Duration // time to live; negative means never expires
}

// Queue is an Azure Storage queue.
type Queue interface {
	Name() string
	// Create makes the queue; it is not an error if it already exists.
	Create(ctx context.Context) error
	// Drop deletes the queue and its messages; ErrNotFound if absent.
	Drop(ctx context.Context) error
	// Enqueue adds a message. Text longer than MaxMessageBytes is ErrInvalid.
	// The receipt lets the sender delete or re-time the message later (as
	// compensation messages need) without dequeuing it.
	Enqueue(ctx context.Context, text string, opts EnqueueOptions) (Receipt, error)
	// Dequeue receives up to max (1..32) visible messages and hides them for visibility.
	// It may return fewer than are visible, even none (a sharded queue asks
	// only some of its shards a call), but polling again finds the rest:
	// an empty Dequeue does not say the queue is empty; ApproximateLength does.
	Dequeue(ctx context.Context, max int, visibility time.Duration) ([]Message, error)
	// UpdateVisibility hides the message for visibility from now and keeps its
	// text. It returns the new pop receipt; ErrLeaseLost if popReceipt is stale.
	UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error)
	// Delete removes a message; ErrLeaseLost if popReceipt is stale, ErrNotFound if gone.
	Delete(ctx context.Context, id, popReceipt string) error
	// ApproximateLength counts visible and invisible messages.
	ApproximateLength(ctx context.Context) (int, error)
	// Peek returns up to max (1..32) visible messages without hiding them;
	// the returned messages have no pop receipt.
	Peek(ctx context.Context, max int) ([]Message, error)
}

// BlobInfo describes one listed blob.
type BlobInfo struct {
	Name string
	Size int64
}

// Container is an Azure Storage blob container of block blobs.
type Container interface {
	Name() string
	Create(ctx context.Context) error
	Drop(ctx context.Context) error
	// Create-if-absent: ErrExists if a blob with that name is already there.
	PutNew(ctx context.Context, name string, data []byte) error
	// Put writes or overwrites a blob.
	Put(ctx context.Context, name string, data []byte) error
	// Upload streams r into a blob, overwriting it, without holding it whole
	// in memory: blocks of UploadBlockBytes, then a commit.
	Upload(ctx context.Context, name string, r io.Reader) error
	// Get reads a whole blob.
	Get(ctx context.Context, name string) ([]byte, error)
	// Open streams length bytes from offset (length < 0: to the end) in one request.
	Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error)
	// Delete removes a blob; ErrNotFound if absent.
	Delete(ctx context.Context, name string) error
	// List returns the blobs whose names start with prefix, in name order.
	List(ctx context.Context, prefix string) ([]BlobInfo, error)
}

// Entity is one table row. Property values are string, int64, bool or
// []byte; other types are ErrInvalid. ETag is set on read and ignored on write.
type Entity struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Props        map[string]any
}

// QueryOptions bounds a partition query. RowKeys in [From, To) are
// returned in order; an empty bound is open. Limit caps one page (0: 1000).
type QueryOptions struct {
	From, To     string
	Limit        int
	Continuation string
}

// Page is one page of query results. Next is empty on the last page.
type Page struct {
	Entities []Entity
	Next     string
}

// OpKind is the kind of one operation in an entity group transaction.
type OpKind int

// Transaction operation kinds.
const (
	OpAdd    OpKind = iota // insert; fails if present
	OpUpsert               // insert or replace
	OpUpdate               // replace, If-Match ETag
	OpDelete               // delete, If-Match ETag
)

// Op is one operation in an entity group transaction. For OpDelete only
// the keys and ETag are used.
type Op struct {
	Kind   OpKind
	Entity Entity
	ETag   string // for OpUpdate and OpDelete; AnyETag matches any
}

// TxError reports which operation failed a transaction; it unwraps to the
// sentinel for that operation's failure.
type TxError struct {
	Index int
	Err   error
}

func (e *TxError) Error() string {
	return "storage: transaction operation " + strconv.Itoa(e.Index) + ": " + e.Err.Error()
}
func (e *TxError) Unwrap() error { return e.Err }

// Table is an Azure Storage table.
type Table interface {
	Name() string
	Create(ctx context.Context) error
	Drop(ctx context.Context) error
	// Add inserts; ErrExists if the keys are taken. Returns the new ETag.
	Add(ctx context.Context, e Entity) (string, error)
	// Upsert inserts or replaces. Returns the new ETag.
	Upsert(ctx context.Context, e Entity) (string, error)
	// Update replaces an entity if its ETag matches: ErrPreconditionFailed
	// if not, ErrNotFound if absent. Returns the new ETag.
	Update(ctx context.Context, e Entity, etag string) (string, error)
	// Delete removes an entity if its ETag matches.
	Delete(ctx context.Context, pk, rk, etag string) error
	// Get reads one entity; ErrNotFound if absent.
	Get(ctx context.Context, pk, rk string) (Entity, error)
	// Query reads one page of a partition.
	Query(ctx context.Context, pk string, opts QueryOptions) (Page, error)
	// Transact runs up to MaxBatchOps operations on one partition, all or
	// nothing. On failure it returns a *TxError. On success it returns the
	// new ETag of each operation (empty for deletes).
	Transact(ctx context.Context, pk string, ops []Op) ([]string, error)
}

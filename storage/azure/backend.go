// Package azure implements storage.Backend on Azure Storage: blobs through
// azblob, queues through azqueue, and tables through aztables. The tables
// SDK reports neither the ETags of a transaction nor which operation
// failed it; both are read from the captured raw response (batch.go).
//
// Every SDK error is converted to the storage sentinels here; nothing
// above this package sees an SDK type. Azure's limits and naming rules are
// checked before a request is sent, so the Azurite emulator, which is lax
// about several of them, behaves as Azure does. Messages never hold the
// account key or the connection string.
//
// Choices worth knowing:
//
//   - Queue Delete and UpdateVisibility: Azure answers 404 MessageNotFound
//     both for a message that is gone and for a stale pop receipt, so that
//     error matches storage.ErrNotFound and storage.ErrLeaseLost alike.
//     Azurite's 400 PopReceiptMismatch is ErrLeaseLost only.
//   - UpdateVisibility sends Update Message without a body, which keeps
//     the text (the SDK always sends one; a per-call policy drops it).
//   - Retries are this package's, around whole requests (retry.go), with
//     exponential backoff and full jitter. Azure's answers to load (503
//     Server Busy, 500 Operation Timeout, 429) that outlast them are
//     storage.ErrThrottled as well as storage.ErrTransient. A write whose try may have gone
//     through before failing is checked by reading back when its retry
//     meets its own effect (PutNew, Add, Update, Delete, Transact). A
//     retried Enqueue may leave a duplicate: queue consumers must be
//     idempotent, as Azure's at-least-once delivery demands anyway. A
//     retried UpdateVisibility whose first try went through reports
//     ErrLeaseLost; the message simply comes back after the timeout.
//   - Times in queue calls are whole seconds, rounded up.
//   - Open of a range starting at or past the end reads as empty;
//     Open with length 0 is one Get Blob Properties (it checks existence).
//   - List sorts by byte order, whatever the service's collation.
//   - Creating a container, queue or table that Azure is still deleting
//     (409 *BeingDeleted) is retried as transient; the default retry
//     settings wait about 13 seconds in all on average, less than Azure
//     may take, so a caller that recreates what it just dropped must be
//     ready for ErrTransient.
package azure

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/reversi-cloud/reversi/storage"
)

// Backend is a storage.Backend on one Azure Storage account. It is safe
// for concurrent use; handles are cheap and hold no state of their own.
type Backend struct {
	cfg    *resolved
	httpc  *http.Client
	retry  *retrier
	blobs  *service.Client
	queues *azqueue.ServiceClient
	tables *aztables.ServiceClient
}

var _ storage.Backend = (*Backend)(nil)

// Open validates cfg and builds the clients. It sends no request: the
// first call on a handle is the first request.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := &Backend{cfg: r, httpc: newHTTPClient(r.retry.TryTimeout)}
	b.retry = &retrier{cfg: r.retry, redact: r.redact, sleep: storage.Sleep}

	clientOpts := func() azcore.ClientOptions {
		return azcore.ClientOptions{
			// Retries are ours (retry.go): one try per pipeline run.
			Retry:     policy.RetryOptions{MaxRetries: -1},
			Transport: b.httpc,
			Telemetry: policy.TelemetryOptions{ApplicationID: "reversi"},
		}
	}
	tableOpts := func() *aztables.ClientOptions {
		o := clientOpts()
		o.PerCallPolicies = []policy.Policy{emptyKeyPolicy{}}
		return &aztables.ClientOptions{ClientOptions: o}
	}
	// Every error below comes from the SDK's constructors; they are about
	// the endpoint or credential shape, which resolve() already checked, and
	// their text is redacted anyway.
	if r.key != nil {
		bcred, err := azblob.NewSharedKeyCredential(r.account, r.keyText)
		if err != nil {
			return nil, configErr(r, "blob credential", err)
		}
		if b.blobs, err = service.NewClientWithSharedKeyCredential(r.blobURL, bcred,
			&service.ClientOptions{ClientOptions: clientOpts()}); err != nil {
			return nil, configErr(r, "blob client", err)
		}
		qcred, err := azqueue.NewSharedKeyCredential(r.account, r.keyText)
		if err != nil {
			return nil, configErr(r, "queue credential", err)
		}
		qo := clientOpts()
		qo.PerCallPolicies = []policy.Policy{keepTextPolicy{}}
		if b.queues, err = azqueue.NewServiceClientWithSharedKeyCredential(r.queueURL, qcred,
			&azqueue.ClientOptions{ClientOptions: qo}); err != nil {
			return nil, configErr(r, "queue client", err)
		}
		tcred, err := aztables.NewSharedKeyCredential(r.account, r.keyText)
		if err != nil {
			return nil, configErr(r, "table credential", err)
		}
		if b.tables, err = aztables.NewServiceClientWithSharedKey(r.tURL, tcred,
			tableOpts()); err != nil {
			return nil, configErr(r, "table client", err)
		}
	} else {
		if b.blobs, err = service.NewClient(r.blobURL, r.cred,
			&service.ClientOptions{ClientOptions: clientOpts()}); err != nil {
			return nil, configErr(r, "blob client", err)
		}
		qo := clientOpts()
		qo.PerCallPolicies = []policy.Policy{keepTextPolicy{}}
		if b.queues, err = azqueue.NewServiceClient(r.queueURL, r.cred,
			&azqueue.ClientOptions{ClientOptions: qo}); err != nil {
			return nil, configErr(r, "queue client", err)
		}
		if b.tables, err = aztables.NewServiceClient(r.tURL, r.cred,
			tableOpts()); err != nil {
			return nil, configErr(r, "table client", err)
		}
	}
	return b, nil
}

func configErr(r *resolved, what string, err error) error {
	return &redactedError{msg: "azure: config: " + what + ": " + r.redact(err.Error()), sentinel: ErrConfig}
}

type redactedError struct {
	msg      string
	sentinel error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.sentinel }

func newHTTPClient(tryTimeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       50 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// The per-try timeout: a hung service fails the try, which is then
		// retried. It does not cut off a body being streamed to the caller.
		ResponseHeaderTimeout: tryTimeout,
	}
	return &http.Client{Transport: tr}
}

// Close releases idle connections. Handles must not be used afterwards.
func (b *Backend) Close() error {
	b.httpc.CloseIdleConnections()
	return nil
}

// Queue returns a handle on the named queue. The name is checked by each
// call (ErrInvalid).
func (b *Backend) Queue(name string) storage.Queue {
	return &queue{b: b, name: name, c: b.queues.NewQueueClient(name)}
}

// Container returns a handle on the named blob container.
func (b *Backend) Container(name string) storage.Container {
	return &container{b: b, name: name, c: b.blobs.NewContainerClient(name)}
}

// Table returns a handle on the named table.
func (b *Backend) Table(name string) storage.Table {
	return &table{b: b, name: name, c: b.tables.NewClient(name)}
}

package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/reversi-cloud/reversi/storage"
)

// statusError is a failed sub-response of a table batch, which the SDK
// does not report: the counterpart of azcore.ResponseError.
type statusError struct {
	status  int
	code    string
	message string
	header  http.Header
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%d %s", e.status, e.code)
}

// response extracts the status, service error code and headers of a failed
// response from an SDK error or a failed batch sub-response.
func response(err error) (status int, code string, header http.Header, ok bool) {
	var se *statusError
	if errors.As(err, &se) {
		return se.status, se.code, se.header, true
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.RawResponse != nil {
			header = re.RawResponse.Header
		}
		return re.StatusCode, re.ErrorCode, header, true
	}
	return 0, "", nil, false
}

// failure classifies one failed try.
type failure struct {
	err       error // the error to return: wraps a storage sentinel where one applies
	transient bool  // worth another try
	// mayHaveApplied: the service may have carried out the request although
	// the try failed (timeout, reset connection, 5xx), so a later try can
	// meet the effect of this one.
	mayHaveApplied bool
	retryAfter     time.Duration // the service's Retry-After, if any
}

// classify maps an error of one try to a storage sentinel. what names the
// call for messages ("queue jobs: enqueue"); redact scrubs foreign text.
func classify(ctx context.Context, what string, err error, redact func(string) string) failure {
	var te *storage.TxError
	if errors.As(err, &te) {
		return failure{err: err} // already mapped: a transaction the service refused
	}
	if status, code, header, ok := response(err); ok {
		return classifyStatus(what, status, code, header)
	}
	if ctx.Err() != nil {
		// The caller gave up: not ours to retry.
		return failure{err: fmt.Errorf("azure: %s: %w", what, ctx.Err())}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return failure{err: fmt.Errorf("%w: azure: %s: %s", storage.ErrTransient, what, redact(err.Error())),
			transient: true, mayHaveApplied: true}
	}
	var ne net.Error
	var oe *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr) ||
		(errors.As(err, &oe) && oe.Op == "dial"):
		// The request never left: safe to send again.
		return failure{err: fmt.Errorf("%w: azure: %s: %s", storage.ErrTransient, what, redact(err.Error())), transient: true}
	case strings.Contains(err.Error(), "server closed idle connection"):
		return failure{err: fmt.Errorf("%w: azure: %s: %s", storage.ErrTransient, what, redact(err.Error())), transient: true}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne), errors.As(err, &oe):
		return failure{err: fmt.Errorf("%w: azure: %s: %s", storage.ErrTransient, what, redact(err.Error())),
			transient: true, mayHaveApplied: true}
	}
	// Anything else (a malformed response, an error of ours) is final.
	return failure{err: fmt.Errorf("azure: %s: %s", what, redact(err.Error()))}
}

func classifyStatus(what string, status int, code string, header http.Header) failure {
	desc := strconv.Itoa(status)
	if code != "" {
		desc += " " + code
	}
	wrap := func(sentinel error) error { return fmt.Errorf("%w: azure: %s (%s)", sentinel, what, desc) }
	switch {
	case strings.HasSuffix(code, "BeingDeleted") || code == "ContainerBeingDisabled":
		// Azure deletes containers, queues and tables in the background; a
		// create of the same name fails with 409 until that is done.
		return failure{err: wrap(storage.ErrTransient), transient: true}
	case code == "PopReceiptMismatch":
		return failure{err: wrap(storage.ErrLeaseLost)}
	case code == "MessageNotFound":
		// Azure answers 404 MessageNotFound both for a message that is gone
		// and for a stale pop receipt, so the error matches both sentinels.
		return failure{err: fmt.Errorf("%w: %w: azure: %s (%s): the message is gone or the pop receipt is stale",
			storage.ErrLeaseLost, storage.ErrNotFound, what, desc)}
	}
	switch status {
	case http.StatusNotFound:
		return failure{err: wrap(storage.ErrNotFound)}
	case http.StatusConflict:
		return failure{err: wrap(storage.ErrExists)}
	case http.StatusPreconditionFailed:
		return failure{err: wrap(storage.ErrPreconditionFailed)}
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong,
		http.StatusRequestedRangeNotSatisfiable, http.StatusLengthRequired, http.StatusMethodNotAllowed:
		return failure{err: wrap(storage.ErrInvalid)}
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		// Throttled or busy: Azure did not carry the request out, but a
		// 503 from something in between might hide one that went through.
		// Counting it as possibly applied only costs a read-back.
		return failure{err: throttled(what, desc), transient: true, mayHaveApplied: true, retryAfter: retryAfter(header)}
	case http.StatusInternalServerError:
		if code == "OperationTimedOut" {
			// Azure's other answer to load: the request ran out of time
			// on the server, and may have been carried out.
			return failure{err: throttled(what, desc), transient: true, mayHaveApplied: true, retryAfter: retryAfter(header)}
		}
		return failure{err: wrap(storage.ErrTransient), transient: true, mayHaveApplied: true, retryAfter: retryAfter(header)}
	case http.StatusRequestTimeout, http.StatusBadGateway, http.StatusGatewayTimeout:
		return failure{err: wrap(storage.ErrTransient), transient: true, mayHaveApplied: true, retryAfter: retryAfter(header)}
	case http.StatusUnauthorized, http.StatusForbidden:
		return failure{err: fmt.Errorf("azure: %s: not authorized (%s): check the account key or the credential's role assignments", what, desc)}
	}
	return failure{err: fmt.Errorf("azure: %s: unexpected response (%s)", what, desc)}
}

// throttled is the error of a call Azure refused for load: both
// storage.ErrThrottled and storage.ErrTransient.
func throttled(what, desc string) error {
	return fmt.Errorf("%w: %w: azure: %s (%s)", storage.ErrThrottled, storage.ErrTransient, what, desc)
}

func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return time.Until(t)
		}
	}
	return 0
}

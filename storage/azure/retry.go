package azure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// Retries happen here, around each whole request, and not in the SDK's
// pipeline (whose retry policy is switched off), so that a call knows when
// an earlier try of the same request may have gone through. That matters
// for creates and conditional writes: a try that timed out may have been
// carried out, and its retry then meets its own effect:
//
//   - PutNew or Add answers "exists": the call reads the blob or entity
//     back and reports success if it holds exactly what was written.
//   - Update answers "precondition failed": likewise, compared with what
//     was written; the new ETag is the one read back.
//   - Delete or Drop answers "not found": success.
//   - Transact fails: each operation's outcome is read back; if all of them
//     hold, success.
//   - Enqueue cannot tell: a retried Enqueue may leave the message twice.
//     Queue consumers must be idempotent (they must be anyway: Azure queues
//     deliver at least once).
//
// The read-back can be fooled by another writer that wrote identical
// content in the same moment; for content-addressed or deterministic
// writes, as this project's are, that is the same outcome.

type retrier struct {
	cfg    RetryConfig
	redact func(string) string
	sleep  func(ctx context.Context, d time.Duration) error // replaced in tests
}

// result is the outcome of a retried call.
type result struct {
	// earlierMayHaveApplied: an earlier try failed in a way that may have
	// been carried out by the service.
	earlierMayHaveApplied bool
	attempts              int
}

// do runs try until it succeeds, fails for good, or runs out of attempts.
// The error is mapped to the storage sentinels; after the last attempt a
// transient failure wraps storage.ErrTransient.
func (r *retrier) do(ctx context.Context, what string, try func(ctx context.Context) error) (result, error) {
	var res result
	for {
		res.attempts++
		err := try(ctx)
		if err == nil {
			return res, nil
		}
		f := classify(ctx, what, err, r.redact)
		if !f.transient {
			return res, f.err
		}
		if f.mayHaveApplied {
			res.earlierMayHaveApplied = true
		}
		if res.attempts >= r.cfg.MaxAttempts {
			if res.attempts > 1 {
				return res, fmt.Errorf("%w (gave up after %d tries)", f.err, res.attempts)
			}
			return res, f.err
		}
		if err := r.sleep(ctx, r.backoff(res.attempts, f.retryAfter)); err != nil {
			return res, fmt.Errorf("azure: %s: %w (while waiting to retry: %v)", what, err, f.err)
		}
	}
}

// backoff is the sleep after the given failed try: full jitter over an
// exponentially growing window, at least the service's Retry-After, at
// most MaxDelay.
func (r *retrier) backoff(attempt int, retryAfter time.Duration) time.Duration {
	window := r.cfg.BaseDelay
	for i := 1; i < attempt && window < r.cfg.MaxDelay; i++ {
		window *= 2
	}
	window = min(window, r.cfg.MaxDelay)
	var d time.Duration
	if window > 0 {
		d = time.Duration(rand.Int64N(int64(window)))
	}
	if retryAfter > d {
		d = retryAfter
	}
	return min(d, r.cfg.MaxDelay)
}

// invalid builds an ErrInvalid error for a request refused client-side.
func invalid(what, format string, args ...any) error {
	return fmt.Errorf("%w: azure: %s: %s", storage.ErrInvalid, what, fmt.Sprintf(format, args...))
}

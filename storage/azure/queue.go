package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/reversi-cloud/reversi/storage"
)

type queue struct {
	b    *Backend
	name string
	c    *azqueue.QueueClient
}

func (q *queue) Name() string { return q.name }

func (q *queue) what(op string) string { return "queue " + q.name + ": " + op }

func (q *queue) Create(ctx context.Context) error {
	what := q.what("create")
	if err := storage.ValidQueueName(q.name); err != nil {
		return err
	}
	_, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, err := q.c.Create(ctx, nil)
		return err
	})
	// 409 QueueAlreadyExists means the queue is there with other metadata;
	// that is still "exists", which is not an error here.
	if errors.Is(err, storage.ErrExists) {
		return nil
	}
	return err
}

func (q *queue) Drop(ctx context.Context) error {
	what := q.what("drop")
	if err := storage.ValidQueueName(q.name); err != nil {
		return err
	}
	res, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, err := q.c.Delete(ctx, nil)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil // an earlier try deleted it
	}
	return err
}

// seconds rounds d up to whole seconds, as the queue service counts them.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

func (q *queue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	what := q.what("enqueue")
	if err := storage.ValidQueueName(q.name); err != nil {
		return storage.Receipt{}, err
	}
	if err := storage.ValidMessage(text, opts); err != nil {
		return storage.Receipt{}, err
	}
	o := &azqueue.EnqueueMessageOptions{}
	if opts.Delay > 0 {
		o.VisibilityTimeout = to.Ptr(int32(seconds(opts.Delay)))
	}
	switch {
	case opts.TTL < 0:
		o.TimeToLive = to.Ptr(int32(-1))
	case opts.TTL > 0:
		s := seconds(opts.TTL)
		if s > 1<<31-1 {
			return storage.Receipt{}, invalid(what, "time-to-live %v too long", opts.TTL)
		}
		o.TimeToLive = to.Ptr(int32(s))
	}
	var rc storage.Receipt
	// A retry after a try that may have gone through can enqueue the
	// message twice; see retry.go.
	_, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := q.c.EnqueueMessage(ctx, text, o)
		if err != nil {
			return err
		}
		if len(resp.Messages) != 1 || resp.Messages[0].MessageID == nil || resp.Messages[0].PopReceipt == nil {
			return errors.New("malformed Put Message response")
		}
		rc = storage.Receipt{ID: *resp.Messages[0].MessageID, PopReceipt: *resp.Messages[0].PopReceipt}
		return nil
	})
	return rc, err
}

func (q *queue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	what := q.what("dequeue")
	if err := storage.ValidQueueName(q.name); err != nil {
		return nil, err
	}
	if err := storage.ValidDequeue(max, visibility); err != nil {
		return nil, err
	}
	o := &azqueue.DequeueMessagesOptions{
		NumberOfMessages:  to.Ptr(int32(max)),
		VisibilityTimeout: to.Ptr(int32(seconds(visibility))),
	}
	var msgs []storage.Message
	// A lost try hides messages until their visibility ends; they are
	// then delivered again, as with any consumer that dies.
	_, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := q.c.DequeueMessages(ctx, o)
		if err != nil {
			return err
		}
		msgs = make([]storage.Message, 0, len(resp.Messages))
		for _, m := range resp.Messages {
			if m == nil || m.MessageID == nil || m.PopReceipt == nil {
				return errors.New("malformed Get Messages response")
			}
			msgs = append(msgs, storage.Message{
				ID:           *m.MessageID,
				PopReceipt:   *m.PopReceipt,
				DequeueCount: deref(m.DequeueCount),
				Text:         deref(m.MessageText),
				InsertedAt:   deref(m.InsertionTime),
			})
		}
		return nil
	})
	return msgs, err
}

func (q *queue) Peek(ctx context.Context, max int) ([]storage.Message, error) {
	what := q.what("peek")
	if err := storage.ValidQueueName(q.name); err != nil {
		return nil, err
	}
	if err := storage.ValidPeek(max); err != nil {
		return nil, err
	}
	var msgs []storage.Message
	_, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := q.c.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(max))})
		if err != nil {
			return err
		}
		msgs = make([]storage.Message, 0, len(resp.Messages))
		for _, m := range resp.Messages {
			if m == nil || m.MessageID == nil {
				return errors.New("malformed Peek Messages response")
			}
			msgs = append(msgs, storage.Message{
				ID:           *m.MessageID,
				DequeueCount: deref(m.DequeueCount),
				Text:         deref(m.MessageText),
				InsertedAt:   deref(m.InsertionTime),
			})
		}
		return nil
	})
	return msgs, err
}

// UpdateVisibility sends Update Message without a body, which leaves the
// text as it is (the SDK always sends one; keepTextPolicy drops it).
func (q *queue) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	what := q.what("update visibility")
	if err := storage.ValidQueueName(q.name); err != nil {
		return "", err
	}
	if err := storage.ValidReceipt(id, popReceipt); err != nil {
		return "", fmt.Errorf("azure: %s: %w", what, err)
	}
	if err := storage.ValidVisibility(visibility); err != nil {
		return "", err
	}
	var receipt string
	// Retrying an update whose first try went through meets a stale
	// receipt: ErrLeaseLost, which a caller must handle anyway.
	_, err := q.b.retry.do(context.WithValue(ctx, keepTextKey{}, true), what, func(ctx context.Context) error {
		resp, err := q.c.UpdateMessage(ctx, id, popReceipt, "", &azqueue.UpdateMessageOptions{
			VisibilityTimeout: to.Ptr(int32(seconds(visibility))),
		})
		if err != nil {
			return err
		}
		if resp.PopReceipt == nil {
			return errors.New("malformed Update Message response")
		}
		receipt = *resp.PopReceipt
		return nil
	})
	return receipt, err
}

// Delete removes a message. Azure answers 404 MessageNotFound both when
// the message is gone and when popReceipt is stale (Azurite says 400
// PopReceiptMismatch for the latter); the 404 error therefore matches
// both storage.ErrNotFound and storage.ErrLeaseLost.
func (q *queue) Delete(ctx context.Context, id, popReceipt string) error {
	what := q.what("delete message")
	if err := storage.ValidQueueName(q.name); err != nil {
		return err
	}
	if err := storage.ValidReceipt(id, popReceipt); err != nil {
		return fmt.Errorf("azure: %s: %w", what, err)
	}
	res, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, err := q.c.DeleteMessage(ctx, id, popReceipt, nil)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) && errors.Is(err, storage.ErrLeaseLost) {
		return nil // an earlier try deleted it
	}
	return err
}

func (q *queue) ApproximateLength(ctx context.Context) (int, error) {
	what := q.what("approximate length")
	if err := storage.ValidQueueName(q.name); err != nil {
		return 0, err
	}
	var n int
	_, err := q.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := q.c.GetProperties(ctx, nil)
		if err != nil {
			return err
		}
		if resp.ApproximateMessagesCount == nil {
			return fmt.Errorf("malformed Get Queue Metadata response")
		}
		n = int(*resp.ApproximateMessagesCount)
		return nil
	})
	return n, err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// keepTextKey marks the context of an Update Message that must not
// replace the text.
type keepTextKey struct{}

// keepTextPolicy removes the request body of an Update Message marked with
// keepTextKey. Azure and Azurite then keep the message text. It runs per
// call, before the shared-key signature, so the signature covers the
// request as sent.
type keepTextPolicy struct{}

func (keepTextPolicy) Do(req *policy.Request) (*http.Response, error) {
	if req.Raw().Method == http.MethodPut && req.Raw().Context().Value(keepTextKey{}) != nil {
		if err := req.SetBody(nil, ""); err != nil {
			return nil, err
		}
	}
	return req.Next()
}

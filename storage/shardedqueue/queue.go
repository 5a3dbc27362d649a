// Package shardedqueue is one logical queue over several storage queues,
// its shards, so that a queue's traffic can exceed what Azure allows one
// queue (about 2,000 messages a second). It is a storage.Queue itself:
// whoever enqueues, leases or deletes messages needs no change.
//
// Invariants:
//   - A message lives in exactly one shard, chosen when it is enqueued
//     from a hash of its text, so repeated sends of one text go to one
//     shard and different texts spread evenly.
//   - Every message ID (and so every Receipt.ID) this queue hands out is
//     the shard's number, a dot, and the shard's own ID; UpdateVisibility
//     and Delete route by that number. An ID without a valid shard number
//     cannot name one of this queue's messages: ErrNotFound.
//   - Dequeue asks at most Probes shards (or the probes NewProbing was
//     given) and stops once it has max messages: a poll of an empty
//     queue costs that many calls whatever the number of shards. It may therefore return none while shards it did
//     not ask hold visible messages (storage.Queue allows fewer than are
//     visible). The shards one queue value asks, from however many
//     goroutines, go round all of them one by one from a random start
//     (so that processes sharing the shards do not all start at shard
//     0): any `shards` consecutive asks cover every shard, so a lone
//     consumer's ceil(shards/Probes) empty Dequeues in a row have asked
//     them all, and consumers that poll again find every visible
//     message. Whoever must know that the queue is empty asks
//     ApproximateLength, never an empty Dequeue.
//   - ApproximateLength and Peek ask every shard: they are O(shards),
//     for the rare callers that need the whole queue (the stall and
//     drain checks, audits), not for polling.
package shardedqueue

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// Queue is a storage.Queue over shards.
type Queue struct {
	name   string
	shards []storage.Queue
	probes int           // the most shards a Dequeue asks
	next   atomic.Uint64 // the rotation: the next shard a Dequeue asks, mod len(shards)
}

// Probes is the most shards one Dequeue asks. Two rather than one: at a
// stage's tail, when few shards hold messages, a poll finds one about
// twice as often before its worker backs off, for one more call when
// the queue is empty.
const Probes = 2

// New returns one queue named name over shards. With a single shard it
// returns that shard itself, so a one-shard run names its messages as
// before.
func New(name string, shards []storage.Queue) (storage.Queue, error) {
	return NewProbing(name, shards, Probes)
}

// NewProbing is New for a queue whose Dequeue asks at most probes
// shards: one for a queue whose messages may wait (compensation
// messages, hidden for minutes anyway), so that its empty polls cost
// one call.
func NewProbing(name string, shards []storage.Queue, probes int) (storage.Queue, error) {
	switch {
	case len(shards) == 0:
		return nil, fmt.Errorf("%w: queue %s has no shards", storage.ErrInvalid, name)
	case probes < 1:
		return nil, fmt.Errorf("%w: queue %s probes %d shards a poll", storage.ErrInvalid, name, probes)
	case len(shards) == 1:
		return shards[0], nil
	}
	q := &Queue{name: name, shards: shards, probes: probes}
	// Processes sharing the shards should not all start at shard 0.
	q.next.Store(rand.Uint64())
	return q, nil
}

// Name is the logical queue's name.
func (q *Queue) Name() string { return q.name }

// Shards is the number of shards.
func (q *Queue) Shards() int { return len(q.shards) }

// Create creates every shard.
func (q *Queue) Create(ctx context.Context) error {
	for _, s := range q.shards {
		if err := s.Create(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Drop drops every shard; ErrNotFound only if none existed.
func (q *Queue) Drop(ctx context.Context) error {
	found := false
	for _, s := range q.shards {
		switch err := s.Drop(ctx); {
		case err == nil:
			found = true
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
	}
	if !found {
		return fmt.Errorf("%w: queue %s", storage.ErrNotFound, q.name)
	}
	return nil
}

// shardOf is the shard a text is enqueued to: FNV-1a of the text.
func (q *Queue) shardOf(text string) int {
	h := fnv.New64a()
	h.Write([]byte(text))
	return int(h.Sum64() % uint64(len(q.shards)))
}

func wrapID(shard int, id string) string { return strconv.Itoa(shard) + "." + id }

// route splits an ID of this queue into its shard and the shard's ID.
func (q *Queue) route(id, popReceipt string) (storage.Queue, string, error) {
	if err := storage.ValidReceipt(id, popReceipt); err != nil {
		return nil, "", err
	}
	num, rest, ok := strings.Cut(id, ".")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 0 || i >= len(q.shards) || num != strconv.Itoa(i) {
		return nil, "", fmt.Errorf("%w: message %q is not one of queue %s's", storage.ErrNotFound, id, q.name)
	}
	return q.shards[i], rest, nil
}

// Enqueue adds text to its shard.
func (q *Queue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	i := q.shardOf(text)
	r, err := q.shards[i].Enqueue(ctx, text, opts)
	if err != nil {
		return r, err
	}
	r.ID = wrapID(i, r.ID)
	return r, nil
}

// Dequeue takes up to max messages from at most the queue's probes
// shards, the next ones of the rotation.
func (q *Queue) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	if err := storage.ValidDequeue(max, visibility); err != nil {
		return nil, err
	}
	n := uint64(len(q.shards))
	var out []storage.Message
	for range min(q.probes, len(q.shards)) {
		// Each ask takes the next shard of the rotation, not a window of
		// Probes: a poll that the first shard answers would otherwise
		// skip the second, and a busy consumer would drain half the
		// shards while the others wait.
		i := int((q.next.Add(1) - 1) % n)
		msgs, err := q.shards[i].Dequeue(ctx, max-len(out), visibility)
		if err != nil {
			// Messages already taken come back when their visibility ends.
			return nil, err
		}
		for _, m := range msgs {
			m.ID = wrapID(i, m.ID)
			out = append(out, m)
		}
		if len(out) == max {
			break
		}
	}
	return out, nil
}

// UpdateVisibility re-times a message in its shard.
func (q *Queue) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	if err := storage.ValidVisibility(visibility); err != nil {
		return "", err
	}
	s, sid, err := q.route(id, popReceipt)
	if err != nil {
		return "", err
	}
	return s.UpdateVisibility(ctx, sid, popReceipt, visibility)
}

// Delete removes a message from its shard.
func (q *Queue) Delete(ctx context.Context, id, popReceipt string) error {
	s, sid, err := q.route(id, popReceipt)
	if err != nil {
		return err
	}
	return s.Delete(ctx, sid, popReceipt)
}

// ApproximateLength sums the shards' lengths.
func (q *Queue) ApproximateLength(ctx context.Context) (int, error) {
	total := 0
	for _, s := range q.shards {
		n, err := s.ApproximateLength(ctx)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// Peek returns up to max visible messages, taken from the shards in order.
func (q *Queue) Peek(ctx context.Context, max int) ([]storage.Message, error) {
	if err := storage.ValidPeek(max); err != nil {
		return nil, err
	}
	var out []storage.Message
	for i, s := range q.shards {
		msgs, err := s.Peek(ctx, max-len(out))
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			m.ID = wrapID(i, m.ID)
			out = append(out, m)
		}
		if len(out) == max {
			break
		}
	}
	return out, nil
}

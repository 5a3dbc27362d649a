package embedded

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// never is the expiry of a message without a time to live.
const never = time.Duration(math.MaxInt64)

// message is one queue message. Times are offsets on Backend.now.
type message struct {
	id        string
	text      string
	receipt   string
	dequeues  int64
	inserted  time.Duration
	visibleAt time.Duration
	expires   time.Duration
	seq       uint64 // insertion order, to break ties in visibleAt
	index     int    // position in queue.heap
}

// queue holds its messages in a min-heap ordered by the time they become
// visible, then by insertion: the visible messages are those at the top,
// and they come out roughly first in, first out, as on Azure.
type queue struct {
	mu      sync.Mutex
	dropped bool
	byID    map[string]*message
	heap    []*message
	seq     uint64
	// minExpires is at most the earliest expiry of any message held, so
	// that counting the queue can skip looking for expired messages.
	minExpires time.Duration
}

func newQueue() *queue {
	return &queue{byID: map[string]*message{}, minExpires: never}
}

type queueHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *queueHandle) Name() string { return h.name }

// get returns the live queue, locked.
func (h *queueHandle) get(ctx context.Context) (*queue, error) {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.queues.Load(h.name)
	if !ok {
		return nil, fmt.Errorf("queue %s: %w", h.name, storage.ErrNotFound)
	}
	q := v.(*queue)
	q.mu.Lock()
	if q.dropped {
		q.mu.Unlock()
		return nil, fmt.Errorf("queue %s: %w", h.name, storage.ErrNotFound)
	}
	return q, nil
}

func (h *queueHandle) Create(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	h.b.queues.LoadOrStore(h.name, newQueue())
	return nil
}

func (h *queueHandle) Drop(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	v, ok := h.b.queues.LoadAndDelete(h.name)
	if !ok {
		return fmt.Errorf("drop queue %s: %w", h.name, storage.ErrNotFound)
	}
	q := v.(*queue)
	q.mu.Lock()
	q.dropped = true // calls that found q before it left the registry see it gone
	q.byID, q.heap = nil, nil
	q.mu.Unlock()
	return nil
}

func (h *queueHandle) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	if err := storage.ValidMessage(text, opts); err != nil {
		return storage.Receipt{}, fmt.Errorf("enqueue on %s: %w", h.name, err)
	}
	id, receipt := newID(), newReceipt()
	q, err := h.get(ctx)
	if err != nil {
		return storage.Receipt{}, err
	}
	defer q.mu.Unlock()
	now := h.b.now()
	expires := never
	switch {
	case opts.TTL == 0:
		expires = now + storage.DefaultMessageTTL
	case opts.TTL > 0:
		expires = now + opts.TTL
	}
	q.seq++
	m := &message{
		id: id, text: text, receipt: receipt,
		inserted: now, visibleAt: now + opts.Delay, expires: expires, seq: q.seq,
	}
	q.byID[id] = m
	q.push(m)
	q.minExpires = min(q.minExpires, expires)
	return storage.Receipt{ID: id, PopReceipt: receipt}, nil
}

func (h *queueHandle) Dequeue(ctx context.Context, max int, visibility time.Duration) ([]storage.Message, error) {
	if err := storage.ValidDequeue(max, visibility); err != nil {
		return nil, fmt.Errorf("dequeue from %s: %w", h.name, err)
	}
	q, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := h.b.now()
	var out []storage.Message
	for len(out) < max && len(q.heap) > 0 {
		m := q.heap[0]
		if m.expires <= now {
			q.remove(m)
			continue
		}
		if m.visibleAt > now {
			break
		}
		m.dequeues++
		m.receipt = newReceipt()
		m.visibleAt = now + visibility
		q.down(0)
		if out == nil {
			out = make([]storage.Message, 0, min(max, len(q.heap)))
		}
		out = append(out, h.export(m, true))
	}
	return out, nil
}

func (h *queueHandle) export(m *message, withReceipt bool) storage.Message {
	msg := storage.Message{
		ID: m.id, DequeueCount: m.dequeues, Text: m.text, InsertedAt: h.b.wall(m.inserted),
	}
	if withReceipt {
		msg.PopReceipt = m.receipt
	}
	return msg
}

// lookup finds the message a pop receipt refers to, with Azure's errors.
func (q *queue) lookup(now time.Duration, id, receipt string) (*message, error) {
	m, ok := q.byID[id]
	if !ok {
		return nil, storage.ErrNotFound
	}
	if m.expires <= now {
		q.remove(m)
		return nil, storage.ErrNotFound
	}
	if m.receipt != receipt {
		return nil, storage.ErrLeaseLost
	}
	return m, nil
}

func (h *queueHandle) UpdateVisibility(ctx context.Context, id, popReceipt string, visibility time.Duration) (string, error) {
	if err := storage.ValidReceipt(id, popReceipt); err != nil {
		return "", fmt.Errorf("update message %s on %s: %w", id, h.name, err)
	}
	if err := storage.ValidVisibility(visibility); err != nil {
		return "", fmt.Errorf("update message %s on %s: %w", id, h.name, err)
	}
	receipt := newReceipt()
	q, err := h.get(ctx)
	if err != nil {
		return "", err
	}
	defer q.mu.Unlock()
	now := h.b.now()
	m, err := q.lookup(now, id, popReceipt)
	if err != nil {
		return "", fmt.Errorf("update message %s on %s: %w", id, h.name, err)
	}
	m.receipt = receipt
	m.visibleAt = now + visibility
	q.fix(m.index)
	return receipt, nil
}

func (h *queueHandle) Delete(ctx context.Context, id, popReceipt string) error {
	if err := storage.ValidReceipt(id, popReceipt); err != nil {
		return fmt.Errorf("delete message %s on %s: %w", id, h.name, err)
	}
	q, err := h.get(ctx)
	if err != nil {
		return err
	}
	defer q.mu.Unlock()
	m, err := q.lookup(h.b.now(), id, popReceipt)
	if err != nil {
		return fmt.Errorf("delete message %s on %s: %w", id, h.name, err)
	}
	q.remove(m)
	return nil
}

func (h *queueHandle) ApproximateLength(ctx context.Context) (int, error) {
	q, err := h.get(ctx)
	if err != nil {
		return 0, err
	}
	defer q.mu.Unlock()
	now := h.b.now()
	if now < q.minExpires {
		return len(q.byID), nil
	}
	// Some message may have expired: drop the expired ones, find the next expiry.
	q.minExpires = never
	for _, m := range q.byID {
		if m.expires <= now {
			q.remove(m)
		} else {
			q.minExpires = min(q.minExpires, m.expires)
		}
	}
	return len(q.byID), nil
}

func (h *queueHandle) Peek(ctx context.Context, max int) ([]storage.Message, error) {
	if err := storage.ValidPeek(max); err != nil {
		return nil, fmt.Errorf("peek at %s: %w", h.name, err)
	}
	q, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	now := h.b.now()
	// Walk the heap best-first from the root: a node's children come after
	// it, so the walk yields messages in order and stops at the first
	// invisible one on each path, touching O(max log max) nodes.
	var out []storage.Message
	frontier := []int{}
	if len(q.heap) > 0 {
		frontier = append(frontier, 0)
	}
	for len(out) < max && len(frontier) > 0 {
		best := 0
		for i := 1; i < len(frontier); i++ {
			if q.less(frontier[i], frontier[best]) {
				best = i
			}
		}
		i := frontier[best]
		frontier[best] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		m := q.heap[i]
		if m.visibleAt > now {
			break // the least of the frontier is hidden, so all of it is
		}
		if m.expires > now {
			out = append(out, h.export(m, false))
		}
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(q.heap) {
				frontier = append(frontier, c)
			}
		}
	}
	return out, nil
}

// Heap of messages by (visibleAt, seq), with each message's index kept
// current so that updates and deletes by ID can fix the heap in place.

func (q *queue) less(i, j int) bool {
	a, b := q.heap[i], q.heap[j]
	if a.visibleAt != b.visibleAt {
		return a.visibleAt < b.visibleAt
	}
	return a.seq < b.seq
}

func (q *queue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.heap[i].index = i
	q.heap[j].index = j
}

func (q *queue) push(m *message) {
	m.index = len(q.heap)
	q.heap = append(q.heap, m)
	q.up(m.index)
}

func (q *queue) remove(m *message) {
	delete(q.byID, m.id)
	i, last := m.index, len(q.heap)-1
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	if i != last {
		q.fix(i)
	}
}

func (q *queue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *queue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

// down sifts i toward the leaves and reports whether it moved.
func (q *queue) down(i0 int) bool {
	i, n := i0, len(q.heap)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && q.less(r, c) {
			c = r
		}
		if !q.less(c, i) {
			break
		}
		q.swap(i, c)
		i = c
	}
	return i > i0
}

// newID returns a random GUID-shaped message ID, as Azure's are.
func newID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// newReceipt returns a random pop receipt. Receipts need only be
// unguessable enough not to collide, so math/rand's per-thread generator
// does, and keeps the hot path free of crypto/rand.
func newReceipt() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	var s [24]byte
	hex.Encode(s[:], b[:])
	return string(s[:])
}

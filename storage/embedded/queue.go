package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/reversi-cloud/reversi/storage"
)

// never is the expiry of a message without a time to live.
const never = math.MaxInt64

// message is one stored queue message. Times are Backend.stamp values.
type message struct {
	receipt   string
	dequeues  int64
	inserted  int64
	visibleAt int64
	expires   int64
	seq       uint64 // insertion order, to break ties in visibleAt
	// leased is set while a Dequeue or UpdateVisibility hides the message,
	// as opposed to a delay given at Enqueue: the next Open ends leases,
	// which only the process that took them could have used.
	leased bool
	text   string
}

func (m *message) encode() []byte {
	dst := appendBytes(make([]byte, 0, 64+len(m.text)), m.receipt)
	dst = binary.AppendVarint(dst, m.dequeues)
	dst = binary.AppendVarint(dst, m.inserted)
	dst = binary.AppendVarint(dst, m.visibleAt)
	dst = binary.AppendVarint(dst, m.expires)
	dst = binary.AppendUvarint(dst, m.seq)
	leased := byte(0)
	if m.leased {
		leased = 1
	}
	return appendBytes(append(dst, leased), m.text)
}

// readMessage reads and decodes the message stored under key; found is
// false if there is none.
func (b *Backend) readMessage(key []byte) (m message, found bool, err error) {
	err = b.read(key, func(v []byte) (err error) {
		if found = v != nil; found {
			m, err = decodeMessage(v)
		}
		return err
	})
	return m, found, err
}

func decodeMessage(v []byte) (message, error) {
	r := reader{b: v}
	m := message{receipt: string(r.bytes()), dequeues: r.varint(), inserted: r.varint(),
		visibleAt: r.varint(), expires: r.varint(), seq: r.uvarint(), leased: r.byte() == 1}
	m.text = string(r.bytes())
	return m, r.err
}

// queue is one incarnation of a queue: its messages are store keys
// "m" inc id, indexed by "v" inc visibleAt seq, so the visible messages are
// the first index entries, in order of visibility then insertion, roughly
// first in, first out, as on Azure. All of a queue's operations take its
// lock; the few numbers below are the only queue state held in memory.
type queue struct {
	inc uint64

	mu      sync.Mutex
	dropped bool
	seq     uint64 // last insertion number
	count   int    // messages held, expired or not
	// minExpires is at most the earliest expiry of any message held, so
	// that counting the queue can skip looking for expired messages.
	minExpires int64
	// floor is an index key no live entry is below. Dequeues delete the
	// entries they pass, and deleted keys stay in the store as tombstones
	// until compacted; starting at floor skips them.
	floor []byte
}

func (q *queue) incarnation() uint64 { return q.inc }

func (q *queue) retire() {
	q.mu.Lock()
	q.dropped = true
	q.mu.Unlock()
}

func (q *queue) messageKey(id string) []byte { return append(prefix(keyMessage, q.inc), id...) }

func (q *queue) indexKey(visibleAt int64, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(prefix(keyVisible, q.inc), uint64(visibleAt)), seq)
}

// lower lowers the floor to an index key just written.
func (q *queue) lower(k []byte) {
	if bytes.Compare(k, q.floor) < 0 {
		q.floor = k
	}
}

// visible iterates over the index entries visible at now, in order.
func (q *queue) visible(db *pebble.DB, now int64) (*pebble.Iterator, error) {
	return db.NewIter(&pebble.IterOptions{LowerBound: q.floor, UpperBound: q.indexKey(now+1, 0)})
}

// loadQueue finds a queue's numbers and ends the leases a previous process
// held, adding the changes to batch.
func (b *Backend) loadQueue(inc uint64, batch *pebble.Batch) (*queue, error) {
	q := &queue{inc: inc, minExpires: never}
	q.floor = prefix(keyVisible, inc)
	p := prefix(keyMessage, inc)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	now := b.stamp()
	for it.First(); it.Valid(); it.Next() {
		m, err := decodeMessage(it.Value())
		if err != nil {
			return nil, err
		}
		q.count++
		q.seq = max(q.seq, m.seq)
		q.minExpires = min(q.minExpires, m.expires)
		if !m.leased {
			continue
		}
		if m.visibleAt > now {
			batch.Delete(q.indexKey(m.visibleAt, m.seq), nil)
			m.visibleAt = now
			batch.Set(q.indexKey(m.visibleAt, m.seq), it.Key()[len(p):], nil)
		}
		m.leased = false
		batch.Set(it.Key(), m.encode(), nil)
	}
	return q, it.Error()
}

type queueHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *queueHandle) Name() string { return h.name }

// get enters the backend and returns the live queue, locked; on success
// the caller must unlock it and call h.b.ops.RUnlock.
func (h *queueHandle) get(ctx context.Context) (*queue, error) {
	if err := h.b.enter(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.queues.Load(h.name)
	if ok {
		q := v.(*queue)
		q.mu.Lock()
		if !q.dropped {
			return q, nil
		}
		q.mu.Unlock()
	}
	h.b.ops.RUnlock()
	return nil, fmt.Errorf("queue %s: %w", h.name, storage.ErrNotFound)
}

func (h *queueHandle) Create(ctx context.Context) error {
	return h.b.create(ctx, h.nameErr, &h.b.queues, kindQueue, h.name, func(inc uint64) (resource, error) {
		return &queue{inc: inc, minExpires: never, floor: prefix(keyVisible, inc)}, nil
	})
}

func (h *queueHandle) Drop(ctx context.Context) error {
	_, err := h.b.drop(ctx, h.nameErr, &h.b.queues, kindQueue, "queue", h.name, keyMessage, keyVisible)
	return err
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
	defer h.b.ops.RUnlock()
	if err := h.b.writable(); err != nil {
		q.mu.Unlock()
		return storage.Receipt{}, err
	}
	now := h.b.stamp()
	expires := int64(never)
	switch {
	case opts.TTL == 0:
		expires = now + int64(storage.DefaultMessageTTL)
	case opts.TTL > 0:
		expires = now + int64(opts.TTL)
	}
	q.seq++
	m := message{receipt: receipt, inserted: now, visibleAt: now + int64(opts.Delay), expires: expires, seq: q.seq, text: text}
	batch := h.b.db.NewBatch()
	batch.Set(q.messageKey(id), m.encode(), nil)
	k := q.indexKey(m.visibleAt, m.seq)
	batch.Set(k, []byte(id), nil)
	q.lower(k)
	q.count++
	q.minExpires = min(q.minExpires, expires)
	if err := h.b.commit(batch, q.mu.Unlock); err != nil {
		return storage.Receipt{}, fmt.Errorf("enqueue on %s: %w", h.name, err)
	}
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
	defer h.b.ops.RUnlock()
	out, batch, err := h.dequeue(q, max, visibility)
	if err != nil {
		q.mu.Unlock()
		return nil, fmt.Errorf("dequeue from %s: %w", h.name, err)
	}
	// A lease lost in a crash is harmless: the next Open ends it anyway.
	if err := h.b.commitLazy(batch, q.mu.Unlock); err != nil {
		return nil, fmt.Errorf("dequeue from %s: %w", h.name, err)
	}
	return out, nil
}

// dequeue takes up to max visible messages, with q locked, and returns
// them and the batch that records it.
func (h *queueHandle) dequeue(q *queue, max int, visibility time.Duration) ([]storage.Message, *pebble.Batch, error) {
	now := h.b.stamp()
	it, err := q.visible(h.b.db, now)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	batch := h.b.db.NewBatch()
	var out []storage.Message
	for it.First(); it.Valid() && len(out) < max; it.Next() {
		ik := it.Key()
		q.floor = bytes.Clone(ik) // entries passed are deleted below
		id := string(it.Value())
		mk := q.messageKey(id)
		m, found, err := h.b.readMessage(mk)
		if err != nil {
			batch.Close()
			return nil, nil, err
		}
		batch.Delete(ik, nil)
		if !found {
			continue // an index entry without its message (none should exist): drop it rather than fail every dequeue
		}
		if m.expires <= now {
			batch.Delete(mk, nil)
			q.count--
			continue
		}
		m.dequeues++
		m.receipt = newReceipt()
		m.visibleAt = now + int64(visibility)
		m.leased = true
		batch.Set(mk, m.encode(), nil)
		batch.Set(q.indexKey(m.visibleAt, m.seq), []byte(id), nil)
		if out == nil {
			out = make([]storage.Message, 0, max)
		}
		out = append(out, export(id, &m, true))
	}
	if err := it.Error(); err != nil {
		batch.Close()
		return nil, nil, err
	}
	return out, batch, nil
}

func export(id string, m *message, withReceipt bool) storage.Message {
	msg := storage.Message{ID: id, DequeueCount: m.dequeues, Text: m.text, InsertedAt: time.Unix(0, m.inserted)}
	if withReceipt {
		msg.PopReceipt = m.receipt
	}
	return msg
}

// lookup finds the message a pop receipt refers to, with Azure's errors;
// an expired message is deleted in batch.
func (h *queueHandle) lookup(q *queue, now int64, id, receipt string, batch *pebble.Batch) (message, error) {
	m, found, err := h.b.readMessage(q.messageKey(id))
	if err != nil {
		return message{}, err
	}
	if !found {
		return message{}, storage.ErrNotFound
	}
	if m.expires <= now {
		batch.Delete(q.messageKey(id), nil)
		batch.Delete(q.indexKey(m.visibleAt, m.seq), nil)
		q.count--
		return message{}, storage.ErrNotFound
	}
	if m.receipt != receipt {
		return message{}, storage.ErrLeaseLost
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
	defer h.b.ops.RUnlock()
	now := h.b.stamp()
	batch := h.b.db.NewBatch()
	m, err := h.lookup(q, now, id, popReceipt, batch)
	if err == nil {
		batch.Delete(q.indexKey(m.visibleAt, m.seq), nil)
		m.receipt, m.visibleAt, m.leased = receipt, now+int64(visibility), true
		batch.Set(q.messageKey(id), m.encode(), nil)
		k := q.indexKey(m.visibleAt, m.seq)
		batch.Set(k, []byte(id), nil)
		q.lower(k)
	}
	// Like a dequeue's, a lease a crash loses is ended by the next Open.
	if cerr := h.b.commitLazy(batch, q.mu.Unlock); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("update message %s on %s: %w", id, h.name, err)
	}
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
	defer h.b.ops.RUnlock()
	batch := h.b.db.NewBatch()
	m, err := h.lookup(q, h.b.stamp(), id, popReceipt, batch)
	if err == nil {
		batch.Delete(q.messageKey(id), nil)
		batch.Delete(q.indexKey(m.visibleAt, m.seq), nil)
		q.count--
	}
	if cerr := h.b.commit(batch, q.mu.Unlock); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("delete message %s on %s: %w", id, h.name, err)
	}
	return nil
}

func (h *queueHandle) ApproximateLength(ctx context.Context) (int, error) {
	q, err := h.get(ctx)
	if err != nil {
		return 0, err
	}
	defer h.b.ops.RUnlock()
	now := h.b.stamp()
	if now < q.minExpires {
		n := q.count
		q.mu.Unlock()
		return n, nil
	}
	// Some message may have expired: drop the expired ones, find the next expiry.
	batch := h.b.db.NewBatch()
	err = h.purge(q, now, batch)
	n := q.count
	if cerr := h.b.commitLazy(batch, q.mu.Unlock); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("length of %s: %w", h.name, err)
	}
	return n, nil
}

// purge deletes the expired messages in batch and finds the next expiry.
// Expired messages a crash brings back are purged again.
func (h *queueHandle) purge(q *queue, now int64, batch *pebble.Batch) error {
	p := prefix(keyMessage, q.inc)
	it, err := h.b.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	q.minExpires = never
	for it.First(); it.Valid(); it.Next() {
		m, err := decodeMessage(it.Value())
		if err != nil {
			return err
		}
		if m.expires > now {
			q.minExpires = min(q.minExpires, m.expires)
			continue
		}
		batch.Delete(it.Key(), nil)
		batch.Delete(q.indexKey(m.visibleAt, m.seq), nil)
		q.count--
	}
	return it.Error()
}

func (h *queueHandle) Peek(ctx context.Context, max int) ([]storage.Message, error) {
	if err := storage.ValidPeek(max); err != nil {
		return nil, fmt.Errorf("peek at %s: %w", h.name, err)
	}
	q, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	defer h.b.ops.RUnlock()
	defer q.mu.Unlock()
	now := h.b.stamp()
	it, err := q.visible(h.b.db, now)
	if err != nil {
		return nil, fmt.Errorf("peek at %s: %w", h.name, h.b.describe(err))
	}
	defer it.Close()
	var out []storage.Message
	for it.First(); it.Valid() && len(out) < max; it.Next() {
		id := string(it.Value())
		m, found, err := h.b.readMessage(q.messageKey(id))
		if err != nil {
			return nil, fmt.Errorf("peek at %s: %w", h.name, err)
		}
		if !found {
			continue
		}
		if m.expires > now {
			out = append(out, export(id, &m, false))
		}
	}
	return out, nil
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

package embedded

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/reversi-cloud/reversi/storage"
)

// row is one stored entity. Its props map is never changed once stored (a
// write stores a new row), so readers may copy it outside the lock.
type row struct {
	props map[string]any
	etag  string
}

// partition is the unit of locking: every table operation, transactions
// included, touches a single partition, so writers to different
// partitions never wait for each other.
type partition struct {
	mu   sync.RWMutex
	rows map[string]*row
	keys sortedKeys
}

// table maps partition keys to partitions. Partitions are never removed,
// even when empty, so that a partition found under the table's lock stays
// the one in use; an empty partition costs a few hundred bytes.
type table struct {
	dropped atomic.Bool
	mu      sync.RWMutex
	parts   map[string]*partition
}

type tableHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *tableHandle) Name() string { return h.name }

func (h *tableHandle) notFound() error {
	return fmt.Errorf("table %s: %w", h.name, storage.ErrNotFound)
}

func (h *tableHandle) get(ctx context.Context) (*table, error) {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.tables.Load(h.name)
	if !ok {
		return nil, h.notFound()
	}
	return v.(*table), nil
}

// partition returns partition pk, making it if create is set; nil if it
// does not exist and create is not set.
func (t *table) partition(pk string, create bool) *partition {
	t.mu.RLock()
	p := t.parts[pk]
	t.mu.RUnlock()
	if p != nil || !create {
		return p
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p = t.parts[pk]; p == nil {
		p = &partition{rows: map[string]*row{}}
		t.parts[pk] = p
	}
	return p
}

func (h *tableHandle) Create(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	h.b.tables.LoadOrStore(h.name, &table{parts: map[string]*partition{}})
	return nil
}

func (h *tableHandle) Drop(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	v, ok := h.b.tables.LoadAndDelete(h.name)
	if !ok {
		return fmt.Errorf("drop table %s: %w", h.name, storage.ErrNotFound)
	}
	t := v.(*table)
	t.dropped.Store(true)
	t.mu.Lock()
	t.parts = map[string]*partition{}
	t.mu.Unlock()
	return nil
}

// copyProps deep-copies props: a stored entity must not share memory with
// its caller, who may change the map or a byte slice afterwards.
func copyProps(props map[string]any) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		if b, ok := v.([]byte); ok {
			// Keep an empty slice non-nil: it is a stored empty binary.
			v = append(make([]byte, 0, len(b)), b...)
		}
		out[k] = v
	}
	return out
}

func (h *tableHandle) export(pk, rk string, r *row) storage.Entity {
	return storage.Entity{PartitionKey: pk, RowKey: rk, ETag: r.etag, Props: copyProps(r.props)}
}

// opErr says which single-entity write failed.
func (h *tableHandle) opErr(what string, o storage.Op, err error) error {
	return fmt.Errorf("%s entity (%q, %q) in %s: %w", what, o.Entity.PartitionKey, o.Entity.RowKey, h.name, err)
}

// writeOne runs a single-entity write, already checked with
// storage.ValidOp, as a one-operation transaction, so single writes and
// batches share one code path.
func (h *tableHandle) writeOne(ctx context.Context, what string, o storage.Op) (string, error) {
	etags, err := h.transact(ctx, o.Entity.PartitionKey, []storage.Op{o})
	if err != nil {
		var te *storage.TxError
		if errors.As(err, &te) {
			err = te.Err
		}
		return "", h.opErr(what, o, err)
	}
	return etags[0], nil
}

// Every write checks Azure's limits first, as the Azure adapter does
// client-side, so both backends refuse the same requests.

func (h *tableHandle) Add(ctx context.Context, e storage.Entity) (string, error) {
	o := storage.Op{Kind: storage.OpAdd, Entity: e}
	if err := storage.ValidOp(o); err != nil {
		return "", h.opErr("add", o, err)
	}
	return h.writeOne(ctx, "add", o)
}

func (h *tableHandle) Upsert(ctx context.Context, e storage.Entity) (string, error) {
	o := storage.Op{Kind: storage.OpUpsert, Entity: e}
	if err := storage.ValidOp(o); err != nil {
		return "", h.opErr("upsert", o, err)
	}
	return h.writeOne(ctx, "upsert", o)
}

func (h *tableHandle) Update(ctx context.Context, e storage.Entity, etag string) (string, error) {
	o := storage.Op{Kind: storage.OpUpdate, Entity: e, ETag: etag}
	if err := storage.ValidOp(o); err != nil {
		return "", h.opErr("update", o, err)
	}
	return h.writeOne(ctx, "update", o)
}

func (h *tableHandle) Delete(ctx context.Context, pk, rk, etag string) error {
	o := storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}, ETag: etag}
	if err := storage.ValidOp(o); err != nil {
		return h.opErr("delete", o, err)
	}
	_, err := h.writeOne(ctx, "delete", o)
	return err
}

func (h *tableHandle) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	err := storage.ValidTransaction(pk, ops)
	var etags []string
	if err == nil {
		etags, err = h.transact(ctx, pk, ops)
	}
	if err != nil {
		return nil, fmt.Errorf("transaction on %s partition %q: %w", h.name, pk, err)
	}
	return etags, nil
}

// transact applies ops, which the caller has checked with
// storage.ValidTransaction or storage.ValidOp, all or nothing.
func (h *tableHandle) transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	t, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	// Copy the new entities before taking the lock: the copies are needed
	// anyway, and the lock is then held only for the checks and the swap.
	rows := make([]*row, len(ops))
	for i, o := range ops {
		if o.Kind != storage.OpDelete {
			rows[i] = &row{props: copyProps(o.Entity.Props), etag: h.b.newETag()}
		}
	}
	p := t.partition(pk, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.dropped.Load() {
		return nil, h.notFound()
	}
	// Check every operation first, so that on any failure nothing applies.
	// The checks have ruled out two operations on one row, so each check
	// is independent of the others' effects.
	for i, o := range ops {
		cur := p.rows[o.Entity.RowKey]
		var err error
		switch o.Kind {
		case storage.OpAdd:
			if cur != nil {
				err = storage.ErrExists
			}
		case storage.OpUpdate, storage.OpDelete:
			switch {
			case cur == nil:
				err = storage.ErrNotFound
			case o.ETag != storage.AnyETag && o.ETag != cur.etag:
				err = storage.ErrPreconditionFailed
			}
		}
		if err != nil {
			return nil, &storage.TxError{Index: i, Err: err}
		}
	}
	etags := make([]string, len(ops))
	for i, o := range ops {
		rk := o.Entity.RowKey
		if o.Kind == storage.OpDelete {
			delete(p.rows, rk)
			p.keys.remove(rk)
			continue
		}
		if _, ok := p.rows[rk]; !ok {
			p.keys.insert(rk)
		}
		p.rows[rk] = rows[i]
		etags[i] = rows[i].etag
	}
	return etags, nil
}

func (h *tableHandle) Get(ctx context.Context, pk, rk string) (storage.Entity, error) {
	if err := validKeys(pk, rk); err != nil {
		return storage.Entity{}, fmt.Errorf("get entity in %s: %w", h.name, err)
	}
	t, err := h.get(ctx)
	if err != nil {
		return storage.Entity{}, err
	}
	var r *row
	if p := t.partition(pk, false); p != nil {
		p.mu.RLock()
		r = p.rows[rk]
		p.mu.RUnlock()
	}
	if r == nil || t.dropped.Load() {
		return storage.Entity{}, fmt.Errorf("get entity (%q, %q) in %s: %w", pk, rk, h.name, storage.ErrNotFound)
	}
	return h.export(pk, rk, r), nil
}

func validKeys(pk, rk string) error {
	if err := storage.ValidKey(pk); err != nil {
		return err
	}
	return storage.ValidKey(rk)
}

// MaxQueryPage is the most entities one Query returns, as on Azure.
const MaxQueryPage = 1000

// Query returns one page of a partition. The continuation token is the
// row key to resume at, encoded so callers treat it as opaque.
func (h *tableHandle) Query(ctx context.Context, pk string, opts storage.QueryOptions) (storage.Page, error) {
	if err := storage.ValidKey(pk); err != nil {
		return storage.Page{}, fmt.Errorf("query %s: %w", h.name, err)
	}
	limit := opts.Limit
	if limit == 0 {
		limit = MaxQueryPage
	}
	if limit < 0 || limit > MaxQueryPage {
		return storage.Page{}, fmt.Errorf("query %s: %w: limit %d is outside 1 to %d", h.name, storage.ErrInvalid, opts.Limit, MaxQueryPage)
	}
	from := opts.From
	if opts.Continuation != "" {
		k, err := base64.RawURLEncoding.DecodeString(opts.Continuation)
		if err != nil {
			return storage.Page{}, fmt.Errorf("query %s: %w: malformed continuation token", h.name, storage.ErrInvalid)
		}
		from = max(from, string(k))
	}
	t, err := h.get(ctx)
	if err != nil {
		return storage.Page{}, err
	}
	p := t.partition(pk, false)
	if p == nil {
		return storage.Page{}, nil
	}
	type hit struct {
		rk string
		r  *row
	}
	hits := make([]hit, 0, min(limit, 64))
	var next string
	p.mu.RLock()
	p.keys.ascend(from, func(rk string) bool {
		if opts.To != "" && rk >= opts.To {
			return false
		}
		if len(hits) == limit {
			next = base64.RawURLEncoding.EncodeToString([]byte(rk))
			return false
		}
		hits = append(hits, hit{rk, p.rows[rk]})
		return true
	})
	p.mu.RUnlock()
	if t.dropped.Load() {
		return storage.Page{}, h.notFound()
	}
	// Rows are immutable, so they are copied out after the lock is gone.
	page := storage.Page{Entities: make([]storage.Entity, len(hits)), Next: next}
	for i, x := range hits {
		page.Entities[i] = h.export(pk, x.rk, x.r)
	}
	return page, nil
}

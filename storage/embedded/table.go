package embedded

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/reversi-cloud/reversi/storage"
)

// partitionStripes is the number of partition locks of a table. Every
// table write touches one partition; partitions hash onto a fixed set of
// locks, so writers to different partitions rarely wait for each other
// and the locks take no memory per partition.
const partitionStripes = 64

// table is one incarnation of a table. Its rows are store keys
// "e" inc pk 0x00 rk, so a partition is a contiguous range in row-key order.
type table struct {
	inc uint64

	mu      sync.RWMutex // held shared by writes, exclusively by Drop
	dropped bool
	stripes [partitionStripes]sync.Mutex
}

func (t *table) incarnation() uint64 { return t.inc }

func (t *table) retire() {
	t.mu.Lock()
	t.dropped = true
	t.mu.Unlock()
}

var stripeSeed = maphash.MakeSeed()

func (t *table) stripe(pk string) *sync.Mutex {
	return &t.stripes[maphash.String(stripeSeed, pk)%partitionStripes]
}

// partitionKey is the start of partition pk's row keys.
func (t *table) partitionKey(pk string) []byte {
	return append(append(prefix(keyEntity, t.inc), pk...), 0)
}

func (t *table) rowKey(pk, rk string) []byte { return append(t.partitionKey(pk), rk...) }

type tableHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *tableHandle) Name() string { return h.name }

func (h *tableHandle) notFound() error {
	return fmt.Errorf("table %s: %w", h.name, storage.ErrNotFound)
}

// get enters the backend and finds the table; on success the caller must
// call h.b.ops.RUnlock.
func (h *tableHandle) get(ctx context.Context) (*table, error) {
	if err := h.b.enter(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.tables.Load(h.name)
	if !ok {
		h.b.ops.RUnlock()
		return nil, h.notFound()
	}
	return v.(*table), nil
}

func (h *tableHandle) Create(ctx context.Context) error {
	return h.b.create(ctx, h.nameErr, &h.b.tables, kindTable, h.name, func(inc uint64) (resource, error) {
		return &table{inc: inc}, nil
	})
}

func (h *tableHandle) Drop(ctx context.Context) error {
	_, err := h.b.drop(ctx, h.nameErr, &h.b.tables, kindTable, "table", h.name, keyEntity)
	return err
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
	defer h.b.ops.RUnlock()
	if err := h.b.writable(); err != nil {
		return nil, err
	}
	// Encode the new entities before taking the lock, which is then held
	// only for the checks and the apply.
	batch := h.b.db.NewBatch()
	etags := make([]string, len(ops))
	keys := make([][]byte, len(ops))
	for i, o := range ops {
		keys[i] = t.rowKey(pk, o.Entity.RowKey)
		if o.Kind == storage.OpDelete {
			batch.Delete(keys[i], nil)
			continue
		}
		id := h.b.newID()
		etags[i] = formatETag(id)
		batch.Set(keys[i], encodeEntity(id, o.Entity.Props), nil)
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		batch.Close()
		return nil, h.notFound()
	}
	mu := t.stripe(pk)
	mu.Lock()
	// Check every operation first, so that on any failure nothing applies.
	// The checks have ruled out two operations on one row, so each check
	// is independent of the others' effects.
	for i, o := range ops {
		if o.Kind == storage.OpUpsert {
			continue
		}
		err := h.b.read(keys[i], func(cur []byte) error { return checkOp(o, cur) })
		if err != nil {
			mu.Unlock()
			batch.Close()
			return nil, &storage.TxError{Index: i, Err: err}
		}
	}
	if err := h.b.commit(batch, mu.Unlock); err != nil {
		return nil, err
	}
	return etags, nil
}

// checkOp checks operation o against the row's current value (nil if absent).
func checkOp(o storage.Op, cur []byte) error {
	switch o.Kind {
	case storage.OpAdd:
		if cur != nil {
			return storage.ErrExists
		}
	case storage.OpUpdate, storage.OpDelete:
		if cur == nil {
			return storage.ErrNotFound
		}
		if o.ETag == storage.AnyETag {
			return nil
		}
		id, err := entityETag(cur)
		if err != nil {
			return err
		}
		if o.ETag != formatETag(id) {
			return storage.ErrPreconditionFailed
		}
	}
	return nil
}

func (h *tableHandle) Get(ctx context.Context, pk, rk string) (storage.Entity, error) {
	if err := validKeys(pk, rk); err != nil {
		return storage.Entity{}, fmt.Errorf("get entity in %s: %w", h.name, err)
	}
	t, err := h.get(ctx)
	if err != nil {
		return storage.Entity{}, err
	}
	defer h.b.ops.RUnlock()
	var e storage.Entity
	err = h.b.read(t.rowKey(pk, rk), func(v []byte) (err error) {
		if v == nil {
			return storage.ErrNotFound
		}
		e, err = exportEntity(pk, rk, v)
		return err
	})
	if err != nil {
		return storage.Entity{}, fmt.Errorf("get entity (%q, %q) in %s: %w", pk, rk, h.name, err)
	}
	return e, nil
}

func exportEntity(pk, rk string, v []byte) (storage.Entity, error) {
	id, props, err := decodeEntity(v)
	if err != nil {
		return storage.Entity{}, err
	}
	return storage.Entity{PartitionKey: pk, RowKey: rk, ETag: formatETag(id), Props: props}, nil
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
	defer h.b.ops.RUnlock()
	start := t.partitionKey(pk)
	io := &pebble.IterOptions{LowerBound: append(slices.Clip(start), from...), UpperBound: prefixEnd(start)}
	if opts.To != "" {
		io.UpperBound = append(slices.Clip(start), opts.To...)
	}
	page, err := h.query(start, io, limit)
	if err != nil {
		return storage.Page{}, fmt.Errorf("query %s partition %q: %w", h.name, pk, err)
	}
	return page, nil
}

func (h *tableHandle) query(start []byte, io *pebble.IterOptions, limit int) (storage.Page, error) {
	it, err := h.b.db.NewIter(io)
	if err != nil {
		return storage.Page{}, h.b.describe(err)
	}
	defer it.Close()
	var page storage.Page
	pk := string(start[9 : len(start)-1])
	for it.First(); it.Valid(); it.Next() {
		rk := string(it.Key()[len(start):])
		if len(page.Entities) == limit {
			page.Next = base64.RawURLEncoding.EncodeToString([]byte(rk))
			break
		}
		e, err := exportEntity(pk, rk, it.Value())
		if err != nil {
			return storage.Page{}, err
		}
		page.Entities = append(page.Entities, e)
	}
	if err := it.Error(); err != nil {
		return storage.Page{}, h.b.describe(err)
	}
	return page, nil
}

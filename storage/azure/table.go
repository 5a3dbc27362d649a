package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/reversi-cloud/reversi/storage"
)

// maxQueryLimit is the most entities one Query Entities request returns.
const maxQueryLimit = 1000

type table struct {
	b    *Backend
	name string
	c    *aztables.Client
}

func (t *table) Name() string { return t.name }

func (t *table) what(op string) string { return "table " + t.name + ": " + op }

func validKeys(keys ...string) error {
	for _, k := range keys {
		if err := storage.ValidKey(k); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) Create(ctx context.Context) error {
	if err := storage.ValidTableName(t.name); err != nil {
		return err
	}
	_, err := t.b.retry.do(ctx, t.what("create"), func(ctx context.Context) error {
		_, err := t.b.tables.CreateTable(ctx, t.name, nil)
		return err
	})
	if errors.Is(err, storage.ErrExists) {
		return nil
	}
	return err
}

func (t *table) Drop(ctx context.Context) error {
	if err := storage.ValidTableName(t.name); err != nil {
		return err
	}
	res, err := t.b.retry.do(ctx, t.what("drop"), func(ctx context.Context) error {
		_, err := t.b.tables.DeleteTable(ctx, t.name, nil)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// checkWrite applies Azure's rules client-side, before any request.
func (t *table) checkWrite(op storage.Op) error {
	if err := storage.ValidTableName(t.name); err != nil {
		return err
	}
	return storage.ValidOp(op)
}

// write runs one entity write, retried, and returns the new ETag.
func (t *table) write(ctx context.Context, what string, try func(ctx context.Context) (azcore.ETag, error)) (result, string, error) {
	var etag azcore.ETag
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		var err error
		etag, err = try(ctx)
		return err
	})
	return res, string(etag), err
}

// Add inserts. If a try that may have gone through is followed by
// "exists", the entity is read back and its properties compared.
func (t *table) Add(ctx context.Context, e storage.Entity) (string, error) {
	what := t.what("add")
	if err := t.checkWrite(storage.Op{Kind: storage.OpAdd, Entity: e}); err != nil {
		return "", err
	}
	body := encodeEntity(e)
	res, etag, err := t.write(ctx, what, func(ctx context.Context) (azcore.ETag, error) {
		resp, err := t.c.AddEntity(ctx, body, nil)
		return resp.ETag, err
	})
	if err != nil && res.earlierMayHaveApplied && errors.Is(err, storage.ErrExists) {
		if got, gerr := t.Get(ctx, e.PartitionKey, e.RowKey); gerr == nil && sameProps(e.Props, got.Props) {
			return got.ETag, nil
		}
	}
	return etag, err
}

// Upsert is Insert Or Replace Entity: a PUT without If-Match.
func (t *table) Upsert(ctx context.Context, e storage.Entity) (string, error) {
	what := t.what("upsert")
	if err := t.checkWrite(storage.Op{Kind: storage.OpUpsert, Entity: e}); err != nil {
		return "", err
	}
	ctx, sdkE := sdkEntity(ctx, e)
	body := encodeEntity(sdkE)
	opts := &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}
	_, etag, err := t.write(ctx, what, func(ctx context.Context) (azcore.ETag, error) {
		resp, err := t.c.UpsertEntity(ctx, body, opts)
		return resp.ETag, err
	})
	return etag, err
}

// Update replaces if etag matches. The SDK would match any ETag if given
// none; storage.ValidOp has made sure there is one. If a try that may have
// gone through is followed by "precondition failed", the entity is read
// back and its properties compared.
func (t *table) Update(ctx context.Context, e storage.Entity, etag string) (string, error) {
	what := t.what("update")
	if err := t.checkWrite(storage.Op{Kind: storage.OpUpdate, Entity: e, ETag: etag}); err != nil {
		return "", err
	}
	wctx, sdkE := sdkEntity(ctx, e)
	body := encodeEntity(sdkE)
	opts := &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: to.Ptr(azcore.ETag(etag))}
	res, newETag, err := t.write(wctx, what, func(ctx context.Context) (azcore.ETag, error) {
		resp, err := t.c.UpdateEntity(ctx, body, opts)
		return resp.ETag, err
	})
	if err != nil && res.earlierMayHaveApplied && errors.Is(err, storage.ErrPreconditionFailed) {
		if got, gerr := t.Get(ctx, e.PartitionKey, e.RowKey); gerr == nil && sameProps(e.Props, got.Props) {
			return got.ETag, nil
		}
	}
	return newETag, err
}

// Delete removes an entity if etag matches (always sent: the SDK's
// default is any ETag).
func (t *table) Delete(ctx context.Context, pk, rk, etag string) error {
	what := t.what("delete")
	if err := t.checkWrite(storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}, ETag: etag}); err != nil {
		return err
	}
	opts := &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETag(etag))}
	ctx, sdkPK := sdkKey(ctx, pk)
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, err := t.c.DeleteEntity(ctx, sdkPK, rk, opts)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

func (t *table) Get(ctx context.Context, pk, rk string) (storage.Entity, error) {
	what := t.what("get")
	if err := storage.ValidTableName(t.name); err != nil {
		return storage.Entity{}, err
	}
	if err := validKeys(pk, rk); err != nil {
		return storage.Entity{}, err
	}
	var e storage.Entity
	ctx, sdkPK := sdkKey(ctx, pk)
	_, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := t.c.GetEntity(ctx, sdkPK, rk, nil)
		if err != nil {
			return err
		}
		if e, err = unmarshalEntity(resp.Value); err != nil {
			return err
		}
		if resp.ETag != "" {
			e.ETag = string(resp.ETag)
		}
		return nil
	})
	if err != nil {
		return storage.Entity{}, err
	}
	return e, nil
}

// sdkEntity is e with the partition key to give the SDK (see sdkKey).
func sdkEntity(ctx context.Context, e storage.Entity) (context.Context, storage.Entity) {
	ctx, e.PartitionKey = sdkKey(ctx, e.PartitionKey)
	return ctx, e
}

// unmarshalEntity reads an entity as the SDK returns it: its JSON.
func unmarshalEntity(data []byte) (storage.Entity, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return storage.Entity{}, fmt.Errorf("malformed entity: %v", err)
	}
	return decodeEntity(raw)
}

// Query is one Query Entities request. The continuation is the service's
// NextPartitionKey and NextRowKey, URL-encoded into one string. Like
// Azure, a page may hold fewer entities than Limit, even none, and still
// have a Next.
func (t *table) Query(ctx context.Context, pk string, opts storage.QueryOptions) (storage.Page, error) {
	what := t.what("query")
	if err := storage.ValidTableName(t.name); err != nil {
		return storage.Page{}, err
	}
	if err := validKeys(pk, opts.From, opts.To); err != nil {
		return storage.Page{}, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = maxQueryLimit
	}
	if limit < 0 || limit > maxQueryLimit {
		return storage.Page{}, invalid(what, "limit %d out of range 0..%d", opts.Limit, maxQueryLimit)
	}
	filter := "PartitionKey eq " + odataString(pk)
	if opts.From != "" {
		filter += " and RowKey ge " + odataString(opts.From)
	}
	if opts.To != "" {
		filter += " and RowKey lt " + odataString(opts.To)
	}
	lo := &aztables.ListEntitiesOptions{Filter: &filter, Top: to.Ptr(int32(limit))}
	if opts.Continuation != "" {
		c, err := url.ParseQuery(opts.Continuation)
		if err != nil || c.Get("pk") == "" {
			return storage.Page{}, invalid(what, "malformed continuation")
		}
		lo.NextPartitionKey = to.Ptr(c.Get("pk"))
		if rk := c.Get("rk"); rk != "" {
			lo.NextRowKey = to.Ptr(rk)
		}
	}
	var page storage.Page
	_, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		// A pager of its own per try, so that a retry asks for the same page.
		resp, err := t.c.NewListEntitiesPager(lo).NextPage(ctx)
		if err != nil {
			return err
		}
		page = storage.Page{Entities: make([]storage.Entity, 0, len(resp.Entities))}
		for _, data := range resp.Entities {
			e, err := unmarshalEntity(data)
			if err != nil {
				return err
			}
			page.Entities = append(page.Entities, e)
		}
		if resp.NextPartitionKey != nil && *resp.NextPartitionKey != "" {
			c := url.Values{"pk": {*resp.NextPartitionKey}}
			if resp.NextRowKey != nil && *resp.NextRowKey != "" {
				c.Set("rk", *resp.NextRowKey)
			}
			page.Next = c.Encode()
		}
		return nil
	})
	if err != nil {
		return storage.Page{}, err
	}
	return page, nil
}

// odataString quotes s as an OData string literal.
func odataString(s string) string { return "'" + odataEscape(s) + "'" }

// odataEscape doubles single quotes, as an OData string literal holds them.
func odataEscape(s string) string { return strings.ReplaceAll(s, "'", "''") }

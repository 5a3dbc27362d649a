package azure

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
)

// maxQueryLimit is the most entities one Query Entities request returns.
const maxQueryLimit = 1000

type table struct {
	b    *Backend
	name string
}

func (t *table) Name() string { return t.name }

func (t *table) what(op string) string { return "table " + t.name + ": " + op }

func (t *table) tc() *tableClient { return t.b.tables }

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
	body, _ := json.Marshal(map[string]string{"TableName": t.name})
	_, err := t.b.retry.do(ctx, t.what("create"), func(ctx context.Context) error {
		_, _, err := t.tc().send(ctx, request{
			method: http.MethodPost, url: t.tc().endpoint + "/Tables",
			header: map[string]string{"Prefer": "return-no-content"},
			body:   body, contentType: "application/json",
		})
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
		_, _, err := t.tc().send(ctx, request{
			method: http.MethodDelete, url: t.tc().endpoint + "/Tables('" + t.name + "')",
		})
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// write is Insert Entity (etag "" and add), Insert Or Replace (etag "",
// !add) or Update Entity with If-Match.
func (t *table) write(ctx context.Context, what string, e storage.Entity, add bool, etag string) (result, string, error) {
	var r request
	switch {
	case add:
		r = request{method: http.MethodPost, url: t.tc().endpoint + "/" + t.name,
			header: map[string]string{"Prefer": "return-no-content"}}
	case etag == "":
		r = request{method: http.MethodPut, url: t.tc().entityURL(t.name, e.PartitionKey, e.RowKey)}
	default:
		r = request{method: http.MethodPut, url: t.tc().entityURL(t.name, e.PartitionKey, e.RowKey),
			header: map[string]string{"If-Match": etag}}
	}
	r.body = encodeEntity(e)
	r.contentType = "application/json"
	var newETag string
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, _, err := t.tc().send(ctx, r)
		if err != nil {
			return err
		}
		newETag = resp.Header.Get("ETag")
		return nil
	})
	return res, newETag, err
}

// checkWrite applies Azure's rules client-side, before any request.
func (t *table) checkWrite(op storage.Op) error {
	if err := storage.ValidTableName(t.name); err != nil {
		return err
	}
	return storage.ValidOp(op)
}

// Add inserts. If a try that may have gone through is followed by
// "exists", the entity is read back and its properties compared.
func (t *table) Add(ctx context.Context, e storage.Entity) (string, error) {
	what := t.what("add")
	if err := t.checkWrite(storage.Op{Kind: storage.OpAdd, Entity: e}); err != nil {
		return "", err
	}
	res, etag, err := t.write(ctx, what, e, true, "")
	if err != nil && res.earlierMayHaveApplied && errors.Is(err, storage.ErrExists) {
		if got, gerr := t.Get(ctx, e.PartitionKey, e.RowKey); gerr == nil && sameProps(e.Props, got.Props) {
			return got.ETag, nil
		}
	}
	return etag, err
}

func (t *table) Upsert(ctx context.Context, e storage.Entity) (string, error) {
	what := t.what("upsert")
	if err := t.checkWrite(storage.Op{Kind: storage.OpUpsert, Entity: e}); err != nil {
		return "", err
	}
	_, etag, err := t.write(ctx, what, e, false, "")
	return etag, err
}

// Update replaces if etag matches. If a try that may have gone through is
// followed by "precondition failed", the entity is read back and its
// properties compared.
func (t *table) Update(ctx context.Context, e storage.Entity, etag string) (string, error) {
	what := t.what("update")
	if err := t.checkWrite(storage.Op{Kind: storage.OpUpdate, Entity: e, ETag: etag}); err != nil {
		return "", err
	}
	res, newETag, err := t.write(ctx, what, e, false, etag)
	if err != nil && res.earlierMayHaveApplied && errors.Is(err, storage.ErrPreconditionFailed) {
		if got, gerr := t.Get(ctx, e.PartitionKey, e.RowKey); gerr == nil && sameProps(e.Props, got.Props) {
			return got.ETag, nil
		}
	}
	return newETag, err
}

func (t *table) Delete(ctx context.Context, pk, rk, etag string) error {
	what := t.what("delete")
	if err := t.checkWrite(storage.Op{Kind: storage.OpDelete, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}, ETag: etag}); err != nil {
		return err
	}
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, _, err := t.tc().send(ctx, request{method: http.MethodDelete,
			url: t.tc().entityURL(t.name, pk, rk), header: map[string]string{"If-Match": etag}})
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
	_, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, body, err := t.tc().send(ctx, request{method: http.MethodGet, url: t.tc().entityURL(t.name, pk, rk)})
		if err != nil {
			return err
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(body, &raw); err != nil {
			return fmt.Errorf("malformed entity: %v", err)
		}
		if e, err = decodeEntity(raw); err != nil {
			return err
		}
		if h := resp.Header.Get("ETag"); h != "" {
			e.ETag = h
		}
		return nil
	})
	if err != nil {
		return storage.Entity{}, err
	}
	return e, nil
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
	q := url.Values{"$filter": {filter}, "$top": {strconv.Itoa(limit)}}
	if opts.Continuation != "" {
		c, err := url.ParseQuery(opts.Continuation)
		if err != nil || c.Get("pk") == "" {
			return storage.Page{}, invalid(what, "malformed continuation")
		}
		q.Set("NextPartitionKey", c.Get("pk"))
		if rk := c.Get("rk"); rk != "" {
			q.Set("NextRowKey", rk)
		}
	}
	u := t.tc().endpoint + "/" + t.name + "()?" + encodeQuery(q)
	var page storage.Page
	_, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, body, err := t.tc().send(ctx, request{method: http.MethodGet, url: u})
		if err != nil {
			return err
		}
		var out struct {
			Value []map[string]json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			return fmt.Errorf("malformed query response: %v", err)
		}
		page = storage.Page{Entities: make([]storage.Entity, 0, len(out.Value))}
		for _, raw := range out.Value {
			e, err := decodeEntity(raw)
			if err != nil {
				return err
			}
			page.Entities = append(page.Entities, e)
		}
		if npk := resp.Header.Get("x-ms-continuation-NextPartitionKey"); npk != "" {
			c := url.Values{"pk": {npk}}
			if nrk := resp.Header.Get("x-ms-continuation-NextRowKey"); nrk != "" {
				c.Set("rk", nrk)
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

// Transact is one entity group transaction ($batch with one changeset).
// Azure's rules are checked first: 1..100 operations, all in partition
// pk, no row twice, at most 4 MiB. A failed transaction returns a
// *storage.TxError naming the operation the service rejected.
func (t *table) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	what := t.what("transact")
	if err := storage.ValidTableName(t.name); err != nil {
		return nil, err
	}
	if err := storage.ValidTransaction(pk, ops); err != nil {
		return nil, err
	}
	body, contentType := t.batchBody(ops)
	if len(body) > storage.MaxBatchBytes {
		return nil, invalid(what, "transaction of %d bytes exceeds %d", len(body), storage.MaxBatchBytes)
	}
	var etags []string
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, respBody, err := t.tc().send(ctx, request{method: http.MethodPost,
			url: t.tc().endpoint + "/$batch", body: body, contentType: contentType})
		var se *statusError
		if errors.As(err, &se) && se.status >= 400 && se.status < 500 {
			// Azure answers some refusals of one operation (a malformed
			// entity, say) for the whole batch, still naming the operation.
			if idx, ok := messageIndex(se.message, len(ops)); ok {
				return &storage.TxError{Index: idx, Err: classifyStatus(what, se.status, se.code, nil).err}
			}
		}
		if err != nil {
			return err
		}
		etags, err = parseBatchResponse(what, resp.Header.Get("Content-Type"), respBody, len(ops))
		return err
	})
	if err == nil {
		return etags, nil
	}
	var te *storage.TxError
	if res.earlierMayHaveApplied && errors.As(err, &te) {
		if etags, ok := t.verifyTx(ctx, ops); ok {
			return etags, nil
		}
	}
	return nil, err
}

// verifyTx reads back every row of a transaction that failed after a try
// that may have gone through: if each row is as the transaction leaves it,
// that try committed it.
func (t *table) verifyTx(ctx context.Context, ops []storage.Op) ([]string, bool) {
	etags := make([]string, len(ops))
	for i, op := range ops {
		got, err := t.Get(ctx, op.Entity.PartitionKey, op.Entity.RowKey)
		if op.Kind == storage.OpDelete {
			if !errors.Is(err, storage.ErrNotFound) {
				return nil, false
			}
			continue
		}
		if err != nil || !sameProps(op.Entity.Props, got.Props) {
			return nil, false
		}
		etags[i] = got.ETag
	}
	return etags, true
}

func randomBoundary(kind string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return kind + "_" + hex.EncodeToString(b[:])
}

// batchBody writes the multipart/mixed body of a transaction: one
// changeset holding one HTTP request per operation.
func (t *table) batchBody(ops []storage.Op) ([]byte, string) {
	batch, cs := randomBoundary("batch"), randomBoundary("changeset")
	var b bytes.Buffer
	fmt.Fprintf(&b, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batch, cs)
	for i, op := range ops {
		e := op.Entity
		fmt.Fprintf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", cs)
		var method, u string
		hdr := []string{"Accept: application/json;odata=minimalmetadata", "DataServiceVersion: 3.0",
			"Content-ID: " + strconv.Itoa(i+1)}
		var payload []byte
		switch op.Kind {
		case storage.OpAdd:
			method, u = http.MethodPost, t.tc().endpoint+"/"+t.name
			hdr = append(hdr, "Prefer: return-no-content")
			payload = encodeEntity(e)
		case storage.OpUpsert:
			method, u = http.MethodPut, t.tc().entityURL(t.name, e.PartitionKey, e.RowKey)
			payload = encodeEntity(e)
		case storage.OpUpdate:
			method, u = http.MethodPut, t.tc().entityURL(t.name, e.PartitionKey, e.RowKey)
			hdr = append(hdr, "If-Match: "+op.ETag)
			payload = encodeEntity(e)
		case storage.OpDelete:
			method, u = http.MethodDelete, t.tc().entityURL(t.name, e.PartitionKey, e.RowKey)
			hdr = append(hdr, "If-Match: "+op.ETag)
		}
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, u)
		if payload != nil {
			hdr = append(hdr, "Content-Type: application/json", "Content-Length: "+strconv.Itoa(len(payload)))
		}
		for _, h := range hdr {
			b.WriteString(h + "\r\n")
		}
		b.WriteString("\r\n")
		b.Write(payload)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n--%s--\r\n", cs, batch)
	return b.Bytes(), "multipart/mixed; boundary=" + batch
}

// parseBatchResponse reads a $batch response. Azure answers 202 whether
// or not the changeset committed: on success one sub-response per
// operation, in order; on failure a single sub-response for the operation
// that failed, whose message starts with its index ("3:The specified
// entity already exists."). A failure becomes a *storage.TxError wrapping
// the sentinel of that sub-response's status.
func parseBatchResponse(what, contentType string, body []byte, nops int) ([]string, error) {
	parts, err := multipartParts(contentType, body)
	if err != nil {
		return nil, err
	}
	if len(parts) != 1 {
		return nil, fmt.Errorf("malformed batch response: %d parts", len(parts))
	}
	sub, err := multipartParts(parts[0].contentType, parts[0].body)
	if err != nil {
		return nil, err
	}
	var etags []string
	for i, p := range sub {
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(p.body)), nil)
		if err != nil {
			return nil, fmt.Errorf("malformed batch sub-response: %v", err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			se := parseTableError(resp.StatusCode, resp.Header, data)
			idx := failedIndex(se.message, resp.Header.Get("Content-ID"), i, len(sub), nops)
			f := classifyStatus(what, se.status, se.code, nil)
			return nil, &storage.TxError{Index: idx, Err: f.err}
		}
		etags = append(etags, resp.Header.Get("ETag"))
	}
	if len(etags) != nops {
		return nil, fmt.Errorf("malformed batch response: %d results for %d operations", len(etags), nops)
	}
	return etags, nil
}

// failedIndex finds which operation a failed sub-response is about: the
// "N:" prefix of the message (Azure, Azurite), else the Content-ID we sent
// (1-based), else its position when the service answered per operation.
func failedIndex(message, contentID string, pos, nsub, nops int) int {
	if n, ok := messageIndex(message, nops); ok {
		return n
	}
	if n, err := strconv.Atoi(strings.TrimSpace(contentID)); err == nil && n >= 1 && n <= nops {
		return n - 1
	}
	if nsub == nops {
		return pos
	}
	return 0
}

// messageIndex reads the "N:" prefix of a batch error message.
func messageIndex(message string, nops int) (int, bool) {
	if head, _, ok := strings.Cut(message, ":"); ok {
		if n, err := strconv.Atoi(head); err == nil && n >= 0 && n < nops {
			return n, true
		}
	}
	return 0, false
}

type part struct {
	contentType string
	body        []byte
}

func multipartParts(contentType string, body []byte) ([]part, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, fmt.Errorf("malformed batch response: content type %q", contentType)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("malformed batch response: %v", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("malformed batch response: %v", err)
		}
		parts = append(parts, part{contentType: p.Header.Get("Content-Type"), body: data})
	}
}

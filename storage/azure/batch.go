package azure

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/reversi-cloud/reversi/storage"
)

// Entity group transactions go through aztables' SubmitTransaction, which
// builds the $batch request but reports neither the new ETags nor which
// operation failed: it returns nothing on success, and on failure an
// error with status 202 and no error code (Azure answers a $batch with 202
// whether or not its changeset committed). So the raw response is captured
// (policy.WithCaptureResponse) and its multipart body, which the pipeline
// has already buffered (runtime.Payload), is read here.

// Transact is one entity group transaction ($batch with one changeset).
// Azure's rules are checked first: 1..100 operations, all in partition
// pk (Azurite accepts other partitions; Azure does not), no row twice, at
// most 4 MiB by storage.BatchSize. A failed transaction returns a
// *storage.TxError naming the operation the service rejected. Update and
// Delete always carry the caller's ETag: the SDK's default is any.
func (t *table) Transact(ctx context.Context, pk string, ops []storage.Op) ([]string, error) {
	what := t.what("transact")
	if err := storage.ValidTableName(t.name); err != nil {
		return nil, err
	}
	if err := storage.ValidTransaction(pk, ops); err != nil {
		return nil, err
	}
	actions := batchActions(ops)
	ctx, _ = sdkKey(ctx, pk)
	var etags []string
	res, err := t.b.retry.do(ctx, what, func(ctx context.Context) error {
		var raw *http.Response
		_, err := t.c.SubmitTransaction(policy.WithCaptureResponse(ctx, &raw), actions, nil)
		if raw == nil {
			return err // no response: a network failure, or an error of the SDK's own
		}
		body, perr := runtime.Payload(raw)
		if perr != nil {
			return perr
		}
		switch {
		case raw.StatusCode == http.StatusAccepted:
			// Success or failure, the body says which.
			etags, err = parseBatchResponse(what, raw.Header.Get("Content-Type"), body, ops)
			return err
		case raw.StatusCode >= 400 && raw.StatusCode < 500:
			// Azure answers some refusals of one operation (a malformed
			// entity, say) for the whole batch, still naming the operation.
			se := parseTableError(raw.StatusCode, raw.Header, body)
			if idx, ok := messageIndex(se.message, len(ops)); ok {
				return &storage.TxError{Index: idx, Err: classifyStatus(what, se.status, se.code, nil).err}
			}
		}
		if err == nil {
			return fmt.Errorf("unexpected batch response status %d", raw.StatusCode)
		}
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

// batchActions turns ops into SDK transaction actions. The SDK puts the
// keys of an update or delete into the sub-request's URL without doubling
// single quotes, as an OData literal needs, so those entities carry their
// keys escaped; the service takes an update's keys from the URL, not from
// the body. An insert's URL holds no keys, so its entity keeps them as
// they are. An empty partition key gets its stand-in (see sdkKey).
func batchActions(ops []storage.Op) []aztables.TransactionAction {
	actions := make([]aztables.TransactionAction, len(ops))
	for i, op := range ops {
		e := op.Entity
		a := &actions[i]
		switch op.Kind {
		case storage.OpAdd:
			a.ActionType = aztables.TransactionTypeAdd
			a.Entity = encodeEntity(e)
			continue
		case storage.OpUpsert:
			a.ActionType = aztables.TransactionTypeInsertReplace
		case storage.OpUpdate:
			a.ActionType = aztables.TransactionTypeUpdateReplace
			a.IfMatch = to.Ptr(azcore.ETag(op.ETag))
		case storage.OpDelete:
			a.ActionType = aztables.TransactionTypeDelete
			a.IfMatch = to.Ptr(azcore.ETag(op.ETag))
			e.Props = nil
		}
		e.PartitionKey, e.RowKey = standIn(odataEscape(e.PartitionKey)), odataEscape(e.RowKey)
		a.Entity = encodeEntity(e)
	}
	return actions
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

// parseBatchResponse reads a $batch response. Azure answers 202 whether
// or not the changeset committed: on success one sub-response per
// operation, in order, each with the new ETag (none for a delete); on
// failure a single sub-response for the operation that failed, whose
// message starts with its index ("3:The specified entity already
// exists."). A failure becomes a *storage.TxError wrapping the sentinel of
// that sub-response's status. A success that lacks an operation's ETag is
// an error: the caller's next conditional write needs it.
func parseBatchResponse(what, contentType string, body []byte, ops []storage.Op) ([]string, error) {
	nops := len(ops)
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
	for i, op := range ops {
		if etags[i] == "" && op.Kind != storage.OpDelete {
			return nil, fmt.Errorf("malformed batch response: no ETag for operation %d", i)
		}
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

// parseTableError reads the service's error code and message from the
// x-ms-error-code header or an OData JSON or XML error body: of a batch
// sub-response, or of a batch refused whole.
func parseTableError(status int, header http.Header, body []byte) *statusError {
	e := &statusError{status: status, header: header}
	if header != nil {
		e.code = header.Get("x-ms-error-code")
	}
	var j struct {
		OData *struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
		Error *struct { // the form of newer service versions
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &j) == nil {
		switch {
		case j.OData != nil:
			e.message = j.OData.Message.Value
			if e.code == "" {
				e.code = j.OData.Code
			}
		case j.Error != nil:
			e.message = j.Error.Message
			if e.code == "" {
				e.code = j.Error.Code
			}
		}
		return e
	}
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &x) == nil {
		e.message = x.Message
		if e.code == "" {
			e.code = x.Code
		}
	}
	return e
}

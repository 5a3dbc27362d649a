package azure

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

const azureBatchFailure = "--batchresponse_66\r\n" +
	"Content-Type: multipart/mixed; boundary=changesetresponse_77\r\n\r\n" +
	"--changesetresponse_77\r\n" +
	"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 409 Conflict\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n" +
	"DataServiceVersion: 3.0;\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
	`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"2:The specified entity already exists.\nRequestId:x\nTime:2024-01-01T00:00:00.0000000Z"}}}` + "\r\n" +
	"--changesetresponse_77--\r\n--batchresponse_66--\r\n"

const azureBatchSuccess = "--batchresponse_66\r\n" +
	"Content-Type: multipart/mixed; boundary=changesetresponse_77\r\n\r\n" +
	"--changesetresponse_77\r\n" +
	"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 204 No Content\r\nDataServiceVersion: 1.0;\r\nETag: W/\"1\"\r\n\r\n\r\n" +
	"--changesetresponse_77\r\n" +
	"Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 204 No Content\r\nDataServiceVersion: 1.0;\r\n\r\n\r\n" +
	"--changesetresponse_77--\r\n--batchresponse_66--\r\n"

// adds is n insert operations followed by the given ones.
func adds(n int, more ...storage.Op) []storage.Op {
	ops := make([]storage.Op, n, n+len(more))
	for i := range ops {
		ops[i] = storage.Op{Kind: storage.OpAdd}
	}
	return append(ops, more...)
}

func TestParseBatchResponse(t *testing.T) {
	const ct = "multipart/mixed; boundary=batchresponse_66"
	del := storage.Op{Kind: storage.OpDelete}
	_, err := parseBatchResponse("tx", ct, []byte(azureBatchFailure), adds(4))
	var te *storage.TxError
	if !errors.As(err, &te) || te.Index != 2 || !errors.Is(err, storage.ErrExists) {
		t.Errorf("failure: %v, want TxError at 2 with ErrExists", err)
	}
	etags, err := parseBatchResponse("tx", ct, []byte(azureBatchSuccess), adds(1, del))
	if err != nil || len(etags) != 2 || etags[0] != `W/"1"` || etags[1] != "" {
		t.Errorf("success: %q %v", etags, err)
	}
	// An insert whose ETag is missing: the caller would lose it.
	if _, err := parseBatchResponse("tx", ct, []byte(azureBatchSuccess), adds(2)); err == nil {
		t.Errorf("no ETag for an insert: no error")
	}
	if _, err := parseBatchResponse("tx", ct, []byte(azureBatchSuccess), adds(2, del)); err == nil {
		t.Errorf("2 results for 3 operations: no error")
	}
	if _, err := parseBatchResponse("tx", "application/json", []byte("{}"), adds(1)); err == nil {
		t.Errorf("not multipart: no error")
	}
	// Without an index in the message, the Content-ID we sent names it.
	noIndex := strings.Replace(azureBatchFailure, `"2:The`, `"The`, 1)
	noIndex = strings.Replace(noIndex, "HTTP/1.1 409 Conflict\r\n", "HTTP/1.1 409 Conflict\r\nContent-ID: 4\r\n", 1)
	_, err = parseBatchResponse("tx", ct, []byte(noIndex), adds(4))
	if !errors.As(err, &te) || te.Index != 3 {
		t.Errorf("failure by Content-ID: %v, want TxError at 3", err)
	}
}

// errCaptured stops a request once its body is captured.
var errCaptured = errors.New("captured")

// captureTransport records the body of each request and sends none.
type captureTransport struct{ sizes []int }

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	c.sizes = append(c.sizes, len(body))
	return nil, errCaptured
}

// batchBodyTable is a table on an endpoint and with a name as long as
// storage.BatchSize allows for together (160 bytes): the worst case of its
// bound. Its requests are captured, not sent.
func batchBodyTable(t testing.TB) (*table, *captureTransport) {
	name := strings.Repeat("t", 63) // the longest table name
	endpoint := "https://" + strings.Repeat("a", 24) + ".table.core.windows.net/"
	endpoint += strings.Repeat("p", 160-len(endpoint)-1-len(name))
	cs := "DefaultEndpointsProtocol=https;AccountName=" + strings.Repeat("a", 24) + ";AccountKey=" + testKey +
		";TableEndpoint=" + endpoint
	b, err := Open(context.Background(), Config{ConnectionString: cs, Retry: RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ct := &captureTransport{}
	b.httpc.Transport = ct
	return b.Table(name).(*table), ct
}

// batchBodySize is the size of the $batch body the SDK sends for ops.
func batchBodySize(t testing.TB, tb *table, ct *captureTransport, ops []storage.Op) int {
	ct.sizes = nil
	if _, err := tb.Transact(context.Background(), ops[0].Entity.PartitionKey, ops); !errors.Is(err, errCaptured) && err != nil &&
		!strings.Contains(err.Error(), errCaptured.Error()) {
		t.Fatalf("transact: %v", err)
	}
	if len(ct.sizes) != 1 {
		t.Fatalf("%d requests, want 1", len(ct.sizes))
	}
	return ct.sizes[0]
}

// TestBatchBodyWithinBatchSize: the body the SDK sends is never larger
// than storage.BatchSize, so the limit every backend checks holds on the
// wire too, whatever the keys, texts and ETags need escaped.
func TestBatchBodyWithinBatchSize(t *testing.T) {
	tb, ct := batchBodyTable(t)
	nasty := "<>&\"\\'\u2028\u2029\x01é✓🂡%+ "
	for _, tc := range []struct {
		what string
		op   storage.Op
	}{
		{"plain add", storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "p", RowKey: "r"}}},
		{"escaped keys", storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: nasty[:8], RowKey: strings.Repeat("'", 1024)}}},
		{"escaped strings", storage.Op{Kind: storage.OpUpdate, ETag: `W/"datetime'2026-11-23T11%3A52%3A41.1234567Z'"`,
			Entity: storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"S": strings.Repeat(nasty, 1000), "T": "<&>"}}}},
		{"every type", storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{
			"S": "", "I": int64(math.MinInt64), "B": false, "X": []byte{1}, "Y": make([]byte, 1000)}}}},
		{"delete", storage.Op{Kind: storage.OpDelete, ETag: "*", Entity: storage.Entity{PartitionKey: nasty[:3], RowKey: "'r'"}}},
	} {
		for _, n := range []int{1, storage.MaxBatchOps} {
			ops := make([]storage.Op, n)
			for i := range ops {
				ops[i] = tc.op
				ops[i].Entity.RowKey += strconv.Itoa(i) // no row twice
			}
			if storage.ValidTransaction(ops[0].Entity.PartitionKey, ops) != nil {
				continue // refused before the SDK sees it
			}
			if size, bound := batchBodySize(t, tb, ct, ops), storage.BatchSize(ops); size > bound {
				t.Errorf("%s, %d operations: body of %d bytes, BatchSize %d", tc.what, n, size, bound)
			}
		}
	}
}

// FuzzBatchBodyWithinBatchSize looks for texts and keys that escape to
// more than storage.BatchSize allows.
func FuzzBatchBodyWithinBatchSize(f *testing.F) {
	f.Add("p", "r", "s", "*")
	f.Add("<'>", "&\"", "\u2028\x00", `W/"x"`)
	tb, ct := batchBodyTable(f)
	f.Fuzz(func(t *testing.T, pk, rk, s, etag string) {
		for _, op := range []storage.Op{
			{Kind: storage.OpUpdate, ETag: etag, Entity: storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"S": s}}},
			{Kind: storage.OpDelete, ETag: etag, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}},
		} {
			ops := []storage.Op{op}
			if storage.ValidTransaction(pk, ops) != nil {
				return
			}
			if size, bound := batchBodySize(t, tb, ct, ops), storage.BatchSize(ops); size > bound {
				t.Errorf("%+v: body of %d bytes, BatchSize %d", op, size, bound)
			}
		}
	})
}

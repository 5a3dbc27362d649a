package azure

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

func TestEntityRoundTrip(t *testing.T) {
	e := storage.Entity{PartitionKey: "p'k", RowKey: "r\"k", Props: map[string]any{
		"S": "a\"b\\c\u0001</script>", "Max": int64(math.MaxInt64), "Min": int64(math.MinInt64),
		"T": true, "F": false, "B": []byte{0, 255}, "E": []byte{}, "Z": "",
	}}
	body := encodeEntity(e)
	if !strings.Contains(string(body), `"Max@odata.type":"Edm.Int64","Max":"9223372036854775807"`) {
		t.Errorf("int64 not written as an Edm.Int64 string: %s", body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	got, err := decodeEntity(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.PartitionKey != e.PartitionKey || got.RowKey != e.RowKey || !sameProps(e.Props, got.Props) {
		t.Errorf("round trip: %+v, want %+v", got, e)
	}
}

func TestDecodeEntity(t *testing.T) {
	// A minimal-metadata response as Azure writes it, with types this
	// project never writes but another writer might.
	body := `{"odata.metadata":"https://a.table.core.windows.net/$metadata#t/@Element",
		"odata.etag":"W/\"datetime'2024-01-01T00%3A00%3A00.0000000Z'\"",
		"PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-01T00:00:00Z",
		"I32":42,"Big@odata.type":"Edm.Int64","Big":"-5","Bare@odata.type":"Edm.Int64","Bare":7,
		"D@odata.type":"Edm.Double","D":"1.5","G@odata.type":"Edm.Guid","G":"00000000-0000-0000-0000-000000000000",
		"When@odata.type":"Edm.DateTime","When":"2024-01-01T00:00:00Z","Flag":true}`
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	e, err := decodeEntity(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"I32": int64(42), "Big": int64(-5), "Bare": int64(7), "D": "1.5",
		"G": "00000000-0000-0000-0000-000000000000", "When": "2024-01-01T00:00:00Z", "Flag": true}
	if !sameProps(want, e.Props) {
		t.Errorf("props %#v, want %#v", e.Props, want)
	}
	if e.ETag != `W/"datetime'2024-01-01T00%3A00%3A00.0000000Z'"` || e.PartitionKey != "p" || e.RowKey != "r" {
		t.Errorf("keys or ETag: %+v", e)
	}
}

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

func TestParseBatchResponse(t *testing.T) {
	const ct = "multipart/mixed; boundary=batchresponse_66"
	_, err := parseBatchResponse("tx", ct, []byte(azureBatchFailure), 4)
	var te *storage.TxError
	if !errors.As(err, &te) || te.Index != 2 || !errors.Is(err, storage.ErrExists) {
		t.Errorf("failure: %v, want TxError at 2 with ErrExists", err)
	}
	etags, err := parseBatchResponse("tx", ct, []byte(azureBatchSuccess), 2)
	if err != nil || len(etags) != 2 || etags[0] != `W/"1"` || etags[1] != "" {
		t.Errorf("success: %q %v", etags, err)
	}
	if _, err := parseBatchResponse("tx", ct, []byte(azureBatchSuccess), 3); err == nil {
		t.Errorf("2 results for 3 operations: no error")
	}
	if _, err := parseBatchResponse("tx", "application/json", []byte("{}"), 1); err == nil {
		t.Errorf("not multipart: no error")
	}
	// Without an index in the message, the Content-ID we sent names it.
	noIndex := strings.Replace(azureBatchFailure, `"2:The`, `"The`, 1)
	noIndex = strings.Replace(noIndex, "HTTP/1.1 409 Conflict\r\n", "HTTP/1.1 409 Conflict\r\nContent-ID: 4\r\n", 1)
	_, err = parseBatchResponse("tx", ct, []byte(noIndex), 4)
	if !errors.As(err, &te) || te.Index != 3 {
		t.Errorf("failure by Content-ID: %v, want TxError at 3", err)
	}
}

// batchBodyTable is a table on an endpoint and with a name as long as
// storage.BatchSize allows for together: the worst case of its bound.
func batchBodyTable() *table {
	endpoint := "https://" + strings.Repeat("a", 24) + ".table.core.windows.net" // the longest account name
	name := strings.Repeat("t", 160-len(endpoint)-1)
	return &table{b: &Backend{tables: &tableClient{endpoint: endpoint}}, name: name}
}

// TestBatchBodyWithinBatchSize: the body the adapter sends is never larger
// than storage.BatchSize, so the limit every backend checks holds on the
// wire too, whatever the keys, texts and ETags need escaped.
func TestBatchBodyWithinBatchSize(t *testing.T) {
	tb := batchBodyTable()
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
			}
			body, _ := tb.batchBody(ops)
			if bound := storage.BatchSize(ops); len(body) > bound {
				t.Errorf("%s, %d operations: body of %d bytes, BatchSize %d", tc.what, n, len(body), bound)
			}
		}
	}
}

// FuzzBatchBodyWithinBatchSize looks for texts and keys that escape to
// more than storage.BatchSize allows.
func FuzzBatchBodyWithinBatchSize(f *testing.F) {
	f.Add("p", "r", "s", "*")
	f.Add("<'>", "&\"", "\u2028\x00", `W/"x"`)
	tb := batchBodyTable()
	f.Fuzz(func(t *testing.T, pk, rk, s, etag string) {
		for _, op := range []storage.Op{
			{Kind: storage.OpUpdate, ETag: etag, Entity: storage.Entity{PartitionKey: pk, RowKey: rk, Props: map[string]any{"S": s}}},
			{Kind: storage.OpDelete, ETag: etag, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}},
		} {
			if storage.ValidOp(op) != nil {
				return
			}
			body, _ := tb.batchBody([]storage.Op{op})
			if bound := storage.BatchSize([]storage.Op{op}); len(body) > bound {
				t.Errorf("%+v: body of %d bytes, BatchSize %d", op, len(body), bound)
			}
		}
	})
}

package azure

import (
	"encoding/json"
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

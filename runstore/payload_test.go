package runstore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

func TestSplitAndJoinPayload(t *testing.T) {
	for _, n := range []int{0, 1, payloadPropBytes, payloadPropBytes + 1, payloadPropBytes*payloadProps + 3} {
		payload := bytes.Repeat([]byte{0xa5, 0x01, 0x7e}, n/3+1)[:n]
		rows := splitPayload(payload)
		var joined []byte
		for i, row := range rows {
			if len(row) > payloadProps {
				t.Fatalf("n=%d: a row has %d properties", n, len(row))
			}
			e := storage.Entity{PartitionKey: "p", RowKey: rkPayloadRow(i), Props: row}
			if err := storage.ValidEntity(e); err != nil {
				t.Fatalf("n=%d: row %d is not a valid entity: %v", n, i, err)
			}
			var err error
			if joined, err = joinPayload(e, joined); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(joined, payload) {
			t.Errorf("n=%d: joined %d bytes, want %d", n, len(joined), len(payload))
		}
	}
	bad := storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"d00": "text"}}
	if _, err := joinPayload(bad, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("joining a string property: %v, want ErrMalformed", err)
	}
}

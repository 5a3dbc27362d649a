package runstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

func TestSplitAndJoinPayload(t *testing.T) {
	for _, n := range []int{0, 1, payloadPropBytes, payloadPropBytes + 1, payloadPropBytes*payloadProps + 3} {
		payload := bytes.Repeat([]byte{0xa5, 0x01, 0x7e}, n/3+1)[:n]
		rows := splitPayload(payload)
		var parts [][]byte
		for i, row := range rows {
			if len(row) > payloadProps {
				t.Fatalf("n=%d: a row has %d properties", n, len(row))
			}
			e := storage.Entity{PartitionKey: "p", RowKey: rkPayloadRow(i), Props: row}
			if err := storage.ValidEntity(e); err != nil {
				t.Fatalf("n=%d: row %d is not a valid entity: %v", n, i, err)
			}
			var err error
			if parts, err = appendRowParts(parts, e); err != nil {
				t.Fatal(err)
			}
		}
		if joined := bytes.Join(parts, nil); !bytes.Equal(joined, payload) {
			t.Errorf("n=%d: joined %d bytes, want %d", n, len(joined), len(payload))
		}
	}
	bad := storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"d00": "text"}}
	if _, err := appendRowParts(nil, bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("joining a string property: %v, want ErrMalformed", err)
	}
}

// TestPayloadRoundTrip stores payloads that span several rows and
// several batches, as sources (alone, and with a terminal list beside
// them, of a few bytes or as long) and as notices from two child blobs,
// and reads each back whole. Sources of a final blob of 262,144 positions
// take about 700 kB, more than one row holds.
func TestPayloadRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	one := payloadPropBytes * payloadProps
	for _, n := range []int{0, 1, one, one + 1, 3*one + 17, (payloadRowsPerBatch+1)*one + 5} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i*7 + i/251)
		}
		rows := len(splitPayload(payload))
		if got, want := PayloadBatches(n), (rows+payloadRowsPerBatch-1)/payloadRowsPerBatch; got != want {
			t.Errorf("a payload of %d bytes in %d rows: PayloadBatches = %d, want %d", n, rows, got, want)
		}
		// Without a terminal list (nil), then beside lists of every size,
		// the empty one included: a list comes back as written, nil only
		// when none was.
		for k, terms := range [][]byte{nil, {}, {1, 2, 3}, bytes.Repeat([]byte{9}, n)} {
			blob := fmt.Sprintf("p%02d/f-000000-%04d-a", 5+min(k, 1), n%10000)
			if err := s.PutSources(ctx, blob, payload, terms); err != nil {
				t.Fatal(err)
			}
			got, list, err := s.SourcesAndTerminals(ctx, blob)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) || (list == nil) != (terms == nil) || !bytes.Equal(list, terms) {
				t.Errorf("sources of %d bytes with a terminal list of %d (nil: %v): read %d and %d bytes back (nil: %v)", n, len(terms), terms == nil, len(got), len(list), list == nil)
			}
			if got, err := s.Sources(ctx, blob); err != nil || !bytes.Equal(got, payload) {
				t.Errorf("sources of %d bytes beside a terminal list of %d: read %d bytes back, %v", n, len(terms), len(got), err)
			}
		}
		for child := 0; child < 2; child++ {
			if err := s.PutNotices(ctx, 5, child, n, append([]byte{byte(child)}, payload...)); err != nil {
				t.Fatal(err)
			}
		}
		ns, err := s.Notices(ctx, 4, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 2 {
			t.Fatalf("notices of %d bytes from 2 children: read %d payloads", n, len(ns))
		}
		for child, got := range ns {
			if !bytes.Equal(got, append([]byte{byte(child)}, payload...)) {
				t.Errorf("notices of %d bytes from child %d: read %d bytes back", n, child, len(got))
			}
		}
	}
}

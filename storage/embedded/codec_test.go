package embedded

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes, as a damaged store might hold, to
// every decoder of stored values: they fail or succeed, never panic, and
// what decodes encodes back to an equivalent value.
func FuzzDecode(f *testing.F) {
	f.Add(encodeEntity(7, map[string]any{"S": "text", "N": int64(-3), "B": true, "Y": []byte{1, 2}}))
	f.Add((&message{receipt: "r", dequeues: 2, inserted: 5, visibleAt: 9, expires: never, seq: 4, leased: true, text: "hi"}).encode())
	f.Add(blob{file: 12, size: 300}.encode())
	f.Add(blob{data: []byte("inline")}.encode())
	f.Fuzz(func(t *testing.T, v []byte) {
		if etag, props, err := decodeEntity(v); err == nil {
			if etag2, props2, err := decodeEntity(encodeEntity(etag, props)); err != nil || etag2 != etag || len(props2) != len(props) {
				t.Errorf("entity round trip: %v", err)
			}
		}
		if m, err := decodeMessage(v); err == nil {
			if m2, err := decodeMessage(m.encode()); err != nil || m2 != m {
				t.Errorf("message round trip: %+v, %v", m2, err)
			}
		}
		if bl, err := decodeBlob(v); err == nil {
			bl2, err := decodeBlob(bl.encode())
			if err != nil || bl2.file != bl.file || bl2.size != bl.size || !bytes.Equal(bl2.data, bl.data) {
				t.Errorf("blob round trip: %+v, %v", bl2, err)
			}
		}
	})
}

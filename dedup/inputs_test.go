package dedup

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/runstore"
)

// testExpansions are markers of three buckets: a task whose edges fill
// every bucket, one with an empty middle bucket, and one without edges.
var testExpansions = []runstore.Expansion{
	{Task: 0, Blob: "p05/e-0000000-a", Cuts: []int64{0, 100, 250, 300}},
	{Task: 1, Blob: "p05/e-0000001-b", Cuts: []int64{0, 40, 40, 90}},
	{Task: 2},
}

func TestInputsRoundTrip(t *testing.T) {
	blob := EncodeInputs(testExpansions, 3)
	want := [][]Input{
		{{Blob: "p05/e-0000000-a", Off: 0, Len: 100}, {Blob: "p05/e-0000001-b", Off: 0, Len: 40}},
		{{Blob: "p05/e-0000000-a", Off: 100, Len: 150}},
		{{Blob: "p05/e-0000000-a", Off: 250, Len: 50}, {Blob: "p05/e-0000001-b", Off: 40, Len: 50}},
	}
	for b, w := range want {
		got, err := readInputs(bytes.NewReader(blob), b, 3)
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("bucket %d: %v, %v; want %v", b, got, err, w)
		}
	}
	if _, err := readInputs(bytes.NewReader(blob), 0, 4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("read as 4 buckets: %v, want ErrCorrupt", err)
	}
	if _, err := readInputs(bytes.NewReader(blob[:len(blob)-2]), 2, 3); err == nil {
		t.Error("a truncated inputs blob was read")
	}
}

// FuzzReadInputs: an inputs blob comes from storage, so any bytes must
// give an error or segments that are non-empty.
func FuzzReadInputs(f *testing.F) {
	f.Add(EncodeInputs(testExpansions, 3), uint8(1))
	f.Add(EncodeInputs(nil, 1), uint8(0))
	f.Fuzz(func(t *testing.T, blob []byte, bucket uint8) {
		const buckets = 3
		in, err := readInputs(bytes.NewReader(blob), int(bucket%buckets), buckets)
		if err != nil {
			return
		}
		for _, i := range in {
			if i.Len <= 0 || i.Off < 0 {
				t.Fatalf("bad segment %+v", i)
			}
		}
	})
}

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
	blob := EncodeInputs(BucketInputs(testExpansions, 3))
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
	f.Add(EncodeInputs(BucketInputs(testExpansions, 3)), uint8(1))
	f.Add(EncodeInputs(BucketInputs(nil, 1)), uint8(0))
	f.Add(EncodeInputs(CombineInputs(testExpansions, 3, 3, 2, 3)), uint8(2))
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

// TestCombineInputs cuts five tasks of four buckets into two groups and
// two ranges: each combine reads its group's bytes of its range's
// buckets, and the bucket merges then read the combined runs' cuts.
func TestCombineInputs(t *testing.T) {
	exps := []runstore.Expansion{
		{Task: 0, Blob: "e0", Cuts: []int64{0, 10, 20, 30, 40}},
		{Task: 1, Blob: "e1", Cuts: []int64{0, 0, 0, 5, 9}},
		{Task: 2, Blob: "e2", Cuts: []int64{0, 7, 7, 7, 7}},
		{Task: 3},
		{Task: 4, Blob: "e4", Cuts: []int64{0, 1, 2, 3, 4}},
	}
	// Groups: tasks {0,1,2} and {3,4}; ranges: buckets {0,1} and {2,3}.
	got := CombineInputs(exps, 5, 4, 2, 2)
	want := [][]Input{
		{{Blob: "e0", Off: 0, Len: 20}, {Blob: "e2", Off: 0, Len: 7}},
		{{Blob: "e0", Off: 20, Len: 20}, {Blob: "e1", Off: 0, Len: 9}},
		{{Blob: "e4", Off: 0, Len: 2}},
		{{Blob: "e4", Off: 2, Len: 2}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lists, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("combine %d: %v, want %v", i, got[i], want[i])
		}
	}
	combines := []runstore.Combine{
		{Index: 0, Blob: "c0", Cuts: []int64{0, 15, 27}},
		{Index: 1, Blob: "c1", Cuts: []int64{0, 10, 29}},
		{Index: 2, Blob: "c2", Cuts: []int64{0, 1, 2}},
		{Index: 3},
	}
	merges := MergeInputs(combines, 4, 2, 2)
	wantMerges := [][]Input{
		{{Blob: "c0", Off: 0, Len: 15}, {Blob: "c2", Off: 0, Len: 1}},
		{{Blob: "c0", Off: 15, Len: 12}, {Blob: "c2", Off: 1, Len: 1}},
		{{Blob: "c1", Off: 0, Len: 10}},
		{{Blob: "c1", Off: 10, Len: 19}},
	}
	blob := EncodeInputs(merges)
	for b, w := range wantMerges {
		got, err := readInputs(bytes.NewReader(blob), b, 4)
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("bucket %d: %v, %v; want %v", b, got, err, w)
		}
	}
}

// TestSamplesPerRun: a ply keeps at most maxPlySamples samples in all,
// and each final run at least one and at most sampleKeys.
func TestSamplesPerRun(t *testing.T) {
	for _, c := range []struct {
		buckets, bucketBlobs int
		want                 int64
	}{
		{1, 16, sampleKeys},
		{174, 16, 94},
		{8192, 1024, 1},
		{0, 0, sampleKeys},
	} {
		got := samplesPerRun(c.buckets, c.bucketBlobs)
		if got != c.want {
			t.Errorf("%d buckets of %d blobs: %d samples a run, want %d", c.buckets, c.bucketBlobs, got, c.want)
		}
		if c.buckets > 0 && got > 1 && got*int64(c.buckets*c.bucketBlobs) > maxPlySamples {
			t.Errorf("%d buckets of %d blobs: %d samples in all", c.buckets, c.bucketBlobs, got*int64(c.buckets*c.bucketBlobs))
		}
	}
}

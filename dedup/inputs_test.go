package dedup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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

// bytesRange opens ranges of an inputs blob held in memory, counting
// the requests and the bytes they return.
type bytesRange struct {
	blob            []byte
	requests, bytes int
}

func (b *bytesRange) open(off, n int64) (io.ReadCloser, error) {
	if off < 0 || off > int64(len(b.blob)) {
		return nil, errors.New("range past the end")
	}
	end := min(int64(len(b.blob)), off+n)
	b.requests++
	b.bytes += int(end - off)
	return io.NopCloser(bytes.NewReader(b.blob[off:end])), nil
}

func readFrom(blob []byte, want, lists int) ([]Input, error) {
	return readInputs((&bytesRange{blob: blob}).open, want, lists)
}

func TestInputsRoundTrip(t *testing.T) {
	want := [][]Input{
		{{Blob: "p05/e-0000000-a", Off: 0, Len: 100}, {Blob: "p05/e-0000001-b", Off: 0, Len: 40}},
		{{Blob: "p05/e-0000000-a", Off: 100, Len: 150}},
		{{Blob: "p05/e-0000000-a", Off: 250, Len: 50}, {Blob: "p05/e-0000001-b", Off: 40, Len: 50}},
	}
	v1, err := os.ReadFile("testdata/inputs-v1.bin") // as written before parts existed
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string][]byte{"version 1": v1}
	for parts := 1; parts <= 4; parts++ {
		blobs[fmt.Sprintf("%d parts", parts)] = EncodeInputs(BucketInputs(testExpansions, 3), parts)
	}
	for name, blob := range blobs {
		for b, w := range want {
			got, err := readFrom(blob, b, 3)
			if err != nil || !slices.Equal(got, w) {
				t.Errorf("%s, bucket %d: %v, %v; want %v", name, b, got, err, w)
			}
		}
		if _, err := readFrom(blob, 0, 4); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s read as 4 buckets: %v, want ErrCorrupt", name, err)
		}
		if _, err := readFrom(blob[:len(blob)-2], 2, 3); err == nil {
			t.Errorf("%s: a truncated inputs blob was read", name)
		}
	}
}

// TestInputsReadPerList: a list's read is four requests of its own
// entries, its part's names and its index entry, however many lists
// and blobs the other parts hold.
func TestInputsReadPerList(t *testing.T) {
	// lists buckets cut into 4 ranges, each bucket reading one segment
	// of each of 8 runs of its range.
	blob := func(lists int) []byte {
		in := make([][]Input, lists)
		for b := range in {
			r := runstore.PartOf(b, lists, 4)
			for k := range 8 {
				in[b] = append(in[b], Input{Blob: fmt.Sprintf("p05/c-%07d-attempt", 4*k+r), Off: int64(100 * b), Len: 100})
			}
		}
		return EncodeInputs(in, 4)
	}
	var reads [2]bytesRange
	for i, lists := range []int{16, 1024} {
		reads[i].blob = blob(lists)
		got, err := readInputs(reads[i].open, 5, lists)
		if err != nil || len(got) != 8 {
			t.Fatalf("list 5 of %d: %v, %v", lists, got, err)
		}
	}
	large := reads[1].blob
	if reads[0].requests != 4 || reads[1].requests != 4 {
		t.Errorf("reading one list took %d and %d requests, want 4", reads[0].requests, reads[1].requests)
	}
	if reads[0].bytes != reads[1].bytes {
		t.Errorf("one list of 16 read %d bytes, of 1024 %d: want the same", reads[0].bytes, reads[1].bytes)
	}
	if len(large) < 32*reads[1].bytes {
		t.Errorf("the blob of 1024 lists is %d bytes, a list's read %d: the test does not tell them apart", len(large), reads[1].bytes)
	}
}

// FuzzReadInputs: an inputs blob comes from storage, so any bytes must
// give an error or segments that are non-empty.
func FuzzReadInputs(f *testing.F) {
	f.Add(EncodeInputs(BucketInputs(testExpansions, 3), 1), uint8(1))
	f.Add(EncodeInputs(BucketInputs(testExpansions, 3), 3), uint8(2))
	f.Add(EncodeInputs(BucketInputs(nil, 1), 1), uint8(0))
	f.Add(EncodeInputs(CombineInputs(testExpansions, 3, 3), 1), uint8(2))
	if v1, err := os.ReadFile("testdata/inputs-v1.bin"); err == nil {
		f.Add(v1, uint8(1))
	}
	f.Fuzz(func(t *testing.T, blob []byte, bucket uint8) {
		const buckets = 3
		in, err := readFrom(blob, int(bucket%buckets), buckets)
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
	got := append(CombineInputs(exps[:3], 4, 2), CombineInputs(exps[3:], 4, 2)...)
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
	blob := EncodeInputs(merges, 2)
	for b, w := range wantMerges {
		got, err := readFrom(blob, b, 4)
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

package runstore

import "testing"

// TestParseBlobNameNamesTheItem: a blob that a compensation message
// covers names the item whose marker would name it and the attempt that
// wrote it, at any width of the item's number (Store.Keep reads that one
// marker); other names are no item's.
func TestParseBlobNameNamesTheItem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    BlobKind
		index   int
		attempt string
	}{
		{ExpansionBlobName(3, 12, "ab12-2"), ExpansionBlob, 12, "ab12-2"},
		{CombineBlobName(3, 7, "ab12-1"), CombineBlob, 7, "ab12-1"},
		{FinalRunBlobName(3, 5, 9, "cd34-3"), FinalRunBlob, 5, "cd34-3"},
		{ExpansionBlobName(3, 12_345_678_901, "ab12-2"), ExpansionBlob, 12_345_678_901, "ab12-2"},
		{FinalRunBlobName(3, 98_765_432_100, 9, "cd34-3"), FinalRunBlob, 98_765_432_100, "cd34-3"},
		{"p03/e-00000000012-ab12-2", ExpansionBlob, 0, ""},
		{"p03/e-0000012", ExpansionBlob, 0, ""},
		{"p03/e-x12-ab", ExpansionBlob, 0, ""},
		{"p03/f-000005-ab", FinalRunBlob, 0, ""},
		{MergeOutputsName(3, 5, "cd34-3"), FinalRunBlob, 5, "cd34-3"},
		{"p03/f-00005-*-", FinalRunBlob, 0, ""},
		{ResultsBlobName(3, 4), ResultsBlob, 4, ""},
	} {
		b, ok := ParseBlobName(tc.name)
		if !ok || b.Kind != tc.kind || b.Index != tc.index || b.Attempt != tc.attempt || b.Covered() != (tc.attempt != "") {
			t.Errorf("ParseBlobName(%q) = %+v, %v; want kind %d, item %d, attempt %q", tc.name, b, ok, tc.kind, tc.index, tc.attempt)
		}
	}
}

// TestCovers: a compensation message covers the blob it names, or when
// it names all the outputs of a merge attempt, exactly that attempt's
// outputs of that bucket and ply.
func TestCovers(t *testing.T) {
	all := MergeOutputsName(3, 5, "cd34-3")
	one := FinalRunBlobName(3, 5, 0, "cd34-3")
	for _, tc := range []struct {
		message, blob string
		want          bool
	}{
		{all, FinalRunBlobName(3, 5, 0, "cd34-3"), true},
		{all, FinalRunBlobName(3, 5, 1234, "cd34-3"), true},
		{all, FinalRunBlobName(3, 5, 0, "cd34-2"), false},
		{all, FinalRunBlobName(3, 5, 0, "cd34-31"), false},
		{all, FinalRunBlobName(3, 6, 0, "cd34-3"), false},
		{all, FinalRunBlobName(4, 5, 0, "cd34-3"), false},
		{all, ResultsBlobName(3, 5), false},
		{all, all, true},
		{MergeOutputsName(3, 50, "cd34-3"), FinalRunBlobName(3, 5, 0, "cd34-3"), false},
		{one, one, true},
		{one, FinalRunBlobName(3, 5, 1, "cd34-3"), false},
		{ExpansionBlobName(3, 5, "ab"), ExpansionBlobName(3, 5, "ab"), true},
		{ExpansionBlobName(3, 5, "ab"), ExpansionBlobName(3, 5, "ac"), false},
	} {
		if got := Covers(tc.message, tc.blob); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.message, tc.blob, got, tc.want)
		}
	}
}

package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Blob names. Their indexes are written as in keys (keys.go), so names
// sort in index order and those below 10^7 are what earlier releases
// wrote. Every blob of a run lies in its ply's folder "pNN/", so a
// ply's spent blobs are swept with one listing. Blobs that a compensation
// message covers carry the writing attempt's tag, so a stale compensation
// message of a dead attempt can only ever delete that attempt's blob.

// BlobKind is what a blob holds.
type BlobKind int

// Blob kinds.
const (
	StartBlob         BlobKind = iota + 1 // ply 0's one final blob: the start position
	ExpansionBlob                         // an expansion task's sorted edges
	FinalRunBlob                          // a bucket merge's output: distinct positions
	ResultsBlob                           // results of final blob Index
	SplittersBlob                         // the ply's bucket bounds
	InputsBlob                            // each bucket's segments of the expansion (or combine) blobs
	CombineBlob                           // a combine task's sorted edges
	CombineInputsBlob                     // each combine task's segments of its group's expansion blobs
)

// BlobName is a parsed blob name.
type BlobName struct {
	Ply   int
	Kind  BlobKind
	Index int // ResultsBlob: the final blob's index
}

// PlyFolder is the prefix of every blob of a ply.
func PlyFolder(ply int) string { return fmt.Sprintf("p%02d/", ply) }

// StartBlobName names ply 0's final blob.
func StartBlobName() string { return PlyFolder(0) + "start" }

// ExpansionBlobName names expansion task task's output for ply.
func ExpansionBlobName(ply, task int, attempt string) string {
	return fmt.Sprintf("%se-%s-%s", PlyFolder(ply), formatIndex(indexWidth, task), attempt)
}

// CombineBlobName names combine task i's output for ply.
func CombineBlobName(ply, i int, attempt string) string {
	return fmt.Sprintf("%sc-%s-%s", PlyFolder(ply), formatIndex(indexWidth, i), attempt)
}

// CombineInputsBlobName names the list of the inputs of each combine
// task of group g of a ply. (Runs before groups had a blob each wrote
// one for the whole ply, "combine-inputs", which parses as the same
// kind.)
func CombineInputsBlobName(ply, g int) string {
	return PlyFolder(ply) + "combine-inputs-" + formatIndex(indexWidth, g)
}

// FinalRunBlobName names output k of a bucket's merge.
func FinalRunBlobName(ply, bucket, k int, attempt string) string {
	return fmt.Sprintf("%sf-%s-%04d-%s", PlyFolder(ply), formatIndex(bucketWidth, bucket), k, attempt)
}

// ResultsBlobName names the results of final blob index of ply.
func ResultsBlobName(ply, index int) string {
	return PlyFolder(ply) + "r-" + formatIndex(indexWidth, index)
}

// SplittersBlobName names a ply's bucket bounds.
func SplittersBlobName(ply int) string { return PlyFolder(ply) + "splitters" }

// InputsBlobName names the list of each bucket's merge inputs of a ply
// without a combine level.
func InputsBlobName(ply int) string { return PlyFolder(ply) + "inputs" }

// RangeInputsBlobName names the list of the merge inputs of each bucket
// of range r of a ply with a combine level. It is of kind InputsBlob.
func RangeInputsBlobName(ply, r int) string {
	return PlyFolder(ply) + "inputs-" + formatIndex(indexWidth, r)
}

// ParseBlobName reads a blob name of the run's layout.
func ParseBlobName(name string) (BlobName, bool) {
	if len(name) < 5 || name[0] != 'p' || name[3] != '/' || !digits(name[1:3]) {
		return BlobName{}, false
	}
	ply, _ := strconv.Atoi(name[1:3])
	b := BlobName{Ply: ply}
	rest := name[4:]
	switch {
	case rest == "start" && ply == 0:
		b.Kind = StartBlob
	case rest == "splitters":
		b.Kind = SplittersBlob
	case rest == "inputs" || numbered(rest, "inputs-"):
		b.Kind = InputsBlob
	case rest == "combine-inputs" || numbered(rest, "combine-inputs-"):
		b.Kind = CombineInputsBlob
	case strings.HasPrefix(rest, "c-"):
		b.Kind = CombineBlob
	case strings.HasPrefix(rest, "r-"):
		i, ok := parseIndex(rest[2:], indexWidth)
		if !ok {
			return BlobName{}, false
		}
		b.Kind, b.Index = ResultsBlob, i
	case strings.HasPrefix(rest, "e-"):
		b.Kind = ExpansionBlob
	case strings.HasPrefix(rest, "f-"):
		b.Kind = FinalRunBlob
	default:
		return BlobName{}, false
	}
	return b, true
}

// numbered reports whether s is prefix and an index.
func numbered(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	_, n := parseIndex(rest, indexWidth)
	return ok && n
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

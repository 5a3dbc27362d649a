package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Blob names. Every blob of a run lies in its ply's folder "pNN/", and
// the blobs of one expansion task, combine task or bucket merge share a
// prefix, so a ply's spent blobs are swept a part at a time, each part
// one listing. Blobs that a compensation
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
	CombineInputsBlob                     // each combine task's segments of the expansion blobs
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
	return ExpansionBlobPrefix(ply, task) + attempt
}

// ExpansionBlobPrefix begins the name of every attempt's output of
// expansion task task for ply, and no other blob's.
func ExpansionBlobPrefix(ply, task int) string { return fmt.Sprintf("%se-%07d-", PlyFolder(ply), task) }

// CombineBlobName names combine task i's output for ply.
func CombineBlobName(ply, i int, attempt string) string { return CombineBlobPrefix(ply, i) + attempt }

// CombineBlobPrefix begins the name of every attempt's output of
// combine task i for ply, and no other blob's.
func CombineBlobPrefix(ply, i int) string { return fmt.Sprintf("%sc-%07d-", PlyFolder(ply), i) }

// CombineInputsBlobName names the list of each combine task's inputs of
// a ply.
func CombineInputsBlobName(ply int) string { return PlyFolder(ply) + "combine-inputs" }

// FinalRunBlobName names output k of a bucket's merge.
func FinalRunBlobName(ply, bucket, k int, attempt string) string {
	return fmt.Sprintf("%s%04d-%s", FinalRunBlobPrefix(ply, bucket), k, attempt)
}

// FinalRunBlobPrefix begins the name of every output of every attempt
// of a bucket's merge, and no other blob's.
func FinalRunBlobPrefix(ply, bucket int) string {
	return fmt.Sprintf("%sf-%06d-", PlyFolder(ply), bucket)
}

// WorkingBlobNames names a ply's working blobs: those it needs only
// until it is Final (BlobInUse).
func WorkingBlobNames(ply int) []string {
	return []string{SplittersBlobName(ply), InputsBlobName(ply), CombineInputsBlobName(ply)}
}

// ResultsBlobName names the results of final blob index of ply.
func ResultsBlobName(ply, index int) string { return fmt.Sprintf("%sr-%07d", PlyFolder(ply), index) }

// SplittersBlobName names a ply's bucket bounds.
func SplittersBlobName(ply int) string { return PlyFolder(ply) + "splitters" }

// InputsBlobName names the list of each bucket's merge inputs of a ply.
func InputsBlobName(ply int) string { return PlyFolder(ply) + "inputs" }

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
	case rest == "inputs":
		b.Kind = InputsBlob
	case rest == "combine-inputs":
		b.Kind = CombineInputsBlob
	case strings.HasPrefix(rest, "c-"):
		b.Kind = CombineBlob
	case strings.HasPrefix(rest, "r-") && len(rest) == 9 && digits(rest[2:]):
		b.Kind = ResultsBlob
		b.Index, _ = strconv.Atoi(rest[2:])
	case strings.HasPrefix(rest, "e-"):
		b.Kind = ExpansionBlob
	case strings.HasPrefix(rest, "f-"):
		b.Kind = FinalRunBlob
	default:
		return BlobName{}, false
	}
	return b, true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

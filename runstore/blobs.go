package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Blob names. Their indexes are written as in keys (keys.go), so names
// sort in index order and those below 10^7 are what earlier releases
// wrote. Every blob of a run lies in its ply's folder "pNN/", and the
// blobs of one expansion task, combine task or bucket merge share a
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
	CombineInputsBlob                     // each combine task's segments of its group's expansion blobs
)

// BlobName is a parsed blob name.
type BlobName struct {
	Ply  int
	Kind BlobKind
	// Index is the item the blob belongs to: the final blob of a
	// ResultsBlob, and the item whose marker names a blob that a
	// compensation message covers (Covered): the expansion task, the
	// combine task or the bucket.
	Index int
	// Attempt is the writing attempt's tag of a Covered blob.
	Attempt string
	// AllOutputs marks a name that stands for every output of one
	// attempt of a bucket's merge (MergeOutputsName), not for one blob:
	// what the merge's one compensation message covers.
	AllOutputs bool
}

// Covered reports whether b is of a kind that a compensation message
// covers until its item's marker names it, with the item and attempt
// its name gives.
func (b BlobName) Covered() bool {
	return (b.Kind == ExpansionBlob || b.Kind == CombineBlob || b.Kind == FinalRunBlob) && b.Attempt != ""
}

// Covers reports whether a compensation message naming covering covers
// the blob named name: that blob itself (a merge output of an earlier
// release had a message of its own), or the blob's CoverName.
func Covers(covering, name string) bool {
	return name == covering || CoverName(name) == covering
}

// CoverName is what the compensation message that covers the blob named
// name names: MergeOutputsName for a merge output, which shares its
// attempt's message, and otherwise the blob itself.
func CoverName(name string) string {
	b, ok := ParseBlobName(name)
	if !ok || b.Kind != FinalRunBlob || b.AllOutputs || !b.Covered() {
		return name
	}
	return MergeOutputsName(b.Ply, b.Index, b.Attempt)
}

// PlyFolder is the prefix of every blob of a ply.
func PlyFolder(ply int) string { return fmt.Sprintf("p%02d/", ply) }

// ExpansionBlobName names expansion task task's output for ply.
func ExpansionBlobName(ply, task int, attempt string) string {
	return ExpansionBlobPrefix(ply, task) + attempt
}

// ExpansionBlobPrefix begins the name of every attempt's output of
// expansion task task for ply, and no other blob's.
func ExpansionBlobPrefix(ply, task int) string {
	return PlyFolder(ply) + "e-" + formatIndex(indexWidth, task) + "-"
}

// CombineBlobName names combine task i's output for ply.
func CombineBlobName(ply, i int, attempt string) string { return CombineBlobPrefix(ply, i) + attempt }

// CombineBlobPrefix begins the name of every attempt's output of
// combine task i for ply, and no other blob's.
func CombineBlobPrefix(ply, i int) string {
	return PlyFolder(ply) + "c-" + formatIndex(indexWidth, i) + "-"
}

// CombineInputsBlobName names the list of the inputs of each combine
// task of group g of a ply. (Runs before groups had a blob each wrote
// one for the whole ply, "combine-inputs", which parses as the same
// kind.)
func CombineInputsBlobName(ply, g int) string {
	return combineInputsPrefix(ply) + "-" + formatIndex(indexWidth, g)
}

func combineInputsPrefix(ply int) string { return PlyFolder(ply) + "combine-inputs" }

// FinalRunBlobName names output k of a bucket's merge.
func FinalRunBlobName(ply, bucket, k int, attempt string) string {
	return fmt.Sprintf("%s%04d-%s", FinalRunBlobPrefix(ply, bucket), k, attempt)
}

// MergeOutputsName stands for every output of one attempt of a
// bucket's merge, which one compensation message covers: a merge does
// not know beforehand how many it writes, and a message per output
// would cost two transactions an output. It is no blob's name; the
// outputs it stands for are listed under FinalRunBlobPrefix.
func MergeOutputsName(ply, bucket int, attempt string) string {
	return FinalRunBlobPrefix(ply, bucket) + allOutputs + "-" + attempt
}

// allOutputs is what MergeOutputsName has where an output's number is.
const allOutputs = "*"

// FinalRunBlobPrefix begins the name of every output of every attempt
// of a bucket's merge, and no other blob's.
func FinalRunBlobPrefix(ply, bucket int) string {
	return PlyFolder(ply) + "f-" + formatIndex(bucketWidth, bucket) + "-"
}

// WorkingBlobPrefixes begin the names of a ply's working blobs, and of
// no other blobs: those it needs only until it is Final (BlobInUse):
// the splitters, the inputs blobs (the ply's, or each range's) and the
// combine inputs blobs (the ply's, or each group's).
func WorkingBlobPrefixes(ply int) []string {
	return []string{SplittersBlobName(ply), InputsBlobName(ply), combineInputsPrefix(ply)}
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
	return InputsBlobName(ply) + "-" + formatIndex(indexWidth, r)
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
	case rest == "inputs" || strings.HasPrefix(rest, "inputs-") && isIndex(rest[len("inputs-"):]):
		b.Kind = InputsBlob
	case rest == "combine-inputs" || strings.HasPrefix(rest, "combine-inputs-") && isIndex(rest[len("combine-inputs-"):]):
		b.Kind = CombineInputsBlob
	case strings.HasPrefix(rest, "c-"):
		b.Kind = CombineBlob
		b.Index, b.Attempt, _ = itemAttempt(rest[2:], indexWidth, false)
	case strings.HasPrefix(rest, "r-"):
		i, ok := parseIndex(rest[2:], indexWidth)
		if !ok {
			return BlobName{}, false
		}
		b.Kind, b.Index = ResultsBlob, i
	case strings.HasPrefix(rest, "e-"):
		b.Kind = ExpansionBlob
		b.Index, b.Attempt, _ = itemAttempt(rest[2:], indexWidth, false)
	case strings.HasPrefix(rest, "f-"):
		b.Kind = FinalRunBlob
		b.Index, b.Attempt, b.AllOutputs = itemAttempt(rest[2:], bucketWidth, true)
	default:
		return BlobName{}, false
	}
	return b, true
}

// itemAttempt reads "<item>-[<output>-]<attempt>": the item's index in
// the code of width (formatIndex), with output set a merge output's
// four-digit number or allOutputs (all is then set), then the attempt's
// tag; attempt is empty if s is not of that form. A blob of a former
// layout is then no item's.
func itemAttempt(s string, width int, output bool) (item int, attempt string, all bool) {
	item, rest, ok := cutIndex(s, width)
	if !ok || !strings.HasPrefix(rest, "-") {
		return 0, "", false
	}
	rest = rest[1:]
	if output {
		k, tail, found := strings.Cut(rest, "-")
		all = k == allOutputs
		if !found || !all && (!digits(k) || len(k) > 12) || tail == "" {
			return 0, "", false
		}
		rest = tail
	}
	return item, rest, all
}

// isIndex reports whether s is one index in the code of indexWidth.
func isIndex(s string) bool {
	_, ok := parseIndex(s, indexWidth)
	return ok
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

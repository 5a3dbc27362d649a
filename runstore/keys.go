package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Partition keys and row keys. They are built only here.
const (
	pkRun     = "run"
	pkPlies   = "plies"
	pkWorkers = "workers"

	rkConfig = "config"
	rkDone   = "done"
)

func pkRuns(ply int) string        { return fmt.Sprintf("r%02d", ply) }
func pkFinals(ply int) string      { return fmt.Sprintf("f%02d", ply) }
func pkResolutions(ply int) string { return fmt.Sprintf("v%02d", ply) }
func rkPly(ply int) string         { return fmt.Sprintf("%02d", ply) }

// Merge outputs of bucket b sort together: "s<bucket>-...". All of them
// lie in [runsFrom, runsTo).
const (
	runsFrom = "s"
	runsTo   = "t"
)

func bucketPrefix(bucket int) string { return "s" + formatIndex(bucketWidth, bucket) + "-" }
func rkOutput(bucket int, attempt string, k int) string {
	return fmt.Sprintf("%s%s-%04d", bucketPrefix(bucket), attempt, k)
}
func rkFinal(index int) string { return formatIndex(indexWidth, index) }
func pkNotices(ply, index int) string {
	return fmt.Sprintf("n%02d-%s", ply, formatIndex(indexWidth, index))
}
func rkNotice(child, row int) string {
	return fmt.Sprintf("%s-%04d", formatIndex(indexWidth, child), row)
}
func rkPayloadRow(row int) string { return fmt.Sprintf("%05d", row) }

// A final blob's terminal list is a second payload of its sources'
// partition, under keys with the prefix terminalsGroup, which sort after
// the sources' own.
const terminalsGroup = "t"

func rkTerminalsRow(row int) string { return terminalsGroup + "-" + rkPayloadRow(row) }
func pkSources(blob string) string  { return "s" + strings.ReplaceAll(blob, "/", "-") }

// Indexes in keys and blob names (items, final blobs, buckets) are
// written in a base width of decimal digits, zero-padded: indexWidth,
// or bucketWidth for buckets, as every release has written them. An
// index too large for the width is a capital letter that says how many
// digits more than the width follow ('A' one, 'B' two, ...), then its
// digits. Capitals sort after digits and a code with more digits after
// one with fewer, so keys sort in index order at any size (past 10^10,
// where a fleet's deepest plies go); and since a code's first character
// fixes its length, no code is a prefix of another, so a key that goes
// on after its index ("-" and a row number) sorts in index order too.
// Below 10^width the codes are those of runs seeded before the capitals
// existed, which therefore read and resume as they were.
const (
	indexWidth  = 7
	bucketWidth = 6
	// maxDigits is the most digits an int has.
	maxDigits = 19
)

// formatIndex writes index i (i >= 0) in the code of the width.
func formatIndex(width, i int) string {
	if i < 0 {
		panic(fmt.Sprintf("runstore: negative index %d", i))
	}
	d := strconv.Itoa(i)
	if len(d) <= width {
		return strings.Repeat("0", width-len(d)) + d
	}
	return string(rune('A'+len(d)-width-1)) + d
}

// cutIndex reads an index in the code of the width at the start of s,
// and returns what follows it. Only the one code formatIndex writes for
// an index is read: a longer code with leading zeros is not.
func cutIndex(s string, width int) (i int, rest string, ok bool) {
	n := width
	if s != "" && s[0] >= 'A' && s[0] <= 'A'+maxDigits-byte(width)-1 {
		n = width + 1 + int(s[0]-'A')
		s = s[1:]
		if s == "" || s[0] == '0' {
			return 0, "", false
		}
	}
	if len(s) < n || !digits(s[:n]) {
		return 0, "", false
	}
	v, err := strconv.ParseInt(s[:n], 10, 0)
	if err != nil {
		return 0, "", false
	}
	return int(v), s[n:], true
}

// parseIndex reads s as exactly one index in the code of the width.
func parseIndex(s string, width int) (int, bool) {
	i, rest, ok := cutIndex(s, width)
	return i, ok && rest == ""
}

// spread is a ply's rows of one kind that are numbered (expansion tasks,
// buckets, final blobs) and spread over the run's partition shards in
// groups of spreadGroup: item i's rows lie in shard (i/spreadGroup) mod
// shards, so a completion group's markers, which its last item counts,
// share a partition, and so do a dispatch leaf's final blob rows. One shard is the base partition itself, as runs seeded
// before sharding have it; more are the base, a hyphen and two digits.
type spread struct {
	base   string
	shards int
}

// pk is the partition of item i's rows.
func (s spread) pk(i int) string {
	if s.shards <= 1 {
		return s.base
	}
	return fmt.Sprintf("%s-%02d", s.base, (i/spreadGroup)%s.shards)
}

// spreadGroup is how many consecutive items' rows share a partition: a
// multiple of every completion fan-out (Completion.Fan) and of
// DispatchFan, and the same for every run, whose rows it places.
const spreadGroup = 64

// pks are every partition of the rows.
func (s spread) pks() []string {
	if s.shards <= 1 {
		return []string{s.base}
	}
	out := make([]string, s.shards)
	for g := range out {
		out[g] = s.pk(g * spreadGroup)
	}
	return out
}

// pksIn are the partitions that hold the rows of the items in span:
// one for a span within a group of spreadGroup items, so that reading
// a few items costs one query, not one a shard.
func (s spread) pksIn(span Span) []string {
	first, last := span.Lo/spreadGroup, (span.Hi-1)/spreadGroup
	switch {
	case span.Lo >= span.Hi:
		return nil
	case s.shards <= 1 || last-first+1 >= s.shards:
		return s.pks()
	}
	out := make([]string, 0, last-first+1)
	for g := first; g <= last; g++ {
		out = append(out, s.pk(g*spreadGroup))
	}
	return out
}

// all are pks and, with shards, the base partition, which then holds
// only the group markers of a flat completion count (completion.go).
func (s spread) all() []string {
	if s.shards <= 1 {
		return []string{s.base}
	}
	return append(s.pks(), s.base)
}

func (s *Store) runRows(ply int) spread   { return spread{pkRuns(ply), s.shards} }
func (s *Store) finalRows(ply int) spread { return spread{pkFinals(ply), s.shards} }

// fence is the row that closes item i to attempt's commit: the commit
// adds it with the marker, and a compensation message that finds no
// marker naming the attempt's blob adds it before deleting the blob
// (Stage.Commit, Store.Keep). It lies in the marker's partition, so the
// two are added in one transaction; "x" sorts after every marker, group
// marker and merge output key.
func (m stageMarkers) fence(i int, attempt string) string {
	return "x" + markerKey(m.item, i) + "-" + attempt
}

func (s *Store) expansionMarkers(ply int) stageMarkers {
	return s.stageMarkers(s.runRows(ply), 'd', 'e', expansionTally)
}
func (s *Store) bucketMarkers(ply int) stageMarkers {
	return s.stageMarkers(s.runRows(ply), 'c', 'k', mergeTally)
}
func (s *Store) resolutionMarkers(ply int) stageMarkers {
	return s.stageMarkers(spread{pkResolutions(ply), s.shards}, 'd', 'e', resolutionTally)
}

func (s *Store) stageMarkers(rows spread, item, group byte, t *tally) stageMarkers {
	return stageMarkers{spread: rows, item: item, group: group, flat: s.completion == FlatCompletion, fan: s.completion.Fan(), tally: t}
}

// The leaves of a dispatch or back stage are counted in a tree whatever
// the run's completion (they came after the flat count), of its fan-out.
func (s *Store) dispatchMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'w', group: 'x', fan: s.completion.Fan()}
}
func (s *Store) backMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'y', group: 'z', fan: s.completion.Fan()}
}

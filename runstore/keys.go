package runstore

import (
	"fmt"
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

func bucketPrefix(bucket int) string { return fmt.Sprintf("s%06d-", bucket) }
func rkOutput(bucket int, attempt string, k int) string {
	return fmt.Sprintf("%s%s-%04d", bucketPrefix(bucket), attempt, k)
}
func rkFinal(index int) string        { return fmt.Sprintf("%07d", index) }
func pkNotices(ply, index int) string { return fmt.Sprintf("n%02d-%07d", ply, index) }
func rkNotice(child, row int) string  { return fmt.Sprintf("%07d-%04d", child, row) }
func rkPayloadRow(row int) string     { return fmt.Sprintf("%05d", row) }
func pkSources(blob string) string    { return "s" + strings.ReplaceAll(blob, "/", "-") }

// spread is a ply's rows of one kind that are numbered (expansion tasks,
// buckets, final blobs) and spread over the run's partition shards by
// completion group: item i's rows lie in shard (i/completionFan) mod
// shards, so a group's markers, which its last item counts, share a
// partition. One shard is the base partition itself, as runs seeded
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
	return fmt.Sprintf("%s-%02d", s.base, (i/completionFan)%s.shards)
}

// pks are every partition of the rows.
func (s spread) pks() []string {
	if s.shards <= 1 {
		return []string{s.base}
	}
	out := make([]string, s.shards)
	for g := range out {
		out[g] = s.pk(g * completionFan)
	}
	return out
}

// all are pks and, with shards, the base partition, which then holds
// only the group markers.
func (s spread) all() []string {
	if s.shards <= 1 {
		return []string{s.base}
	}
	return append(s.pks(), s.base)
}

func (s *Store) runRows(ply int) spread   { return spread{pkRuns(ply), s.shards} }
func (s *Store) finalRows(ply int) spread { return spread{pkFinals(ply), s.shards} }

func (s *Store) expansionMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'd', group: 'e'}
}
func (s *Store) combineMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'a', group: 'b'}
}
func (s *Store) bucketMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'c', group: 'k'}
}
func (s *Store) resolutionMarkers(ply int) stageMarkers {
	return stageMarkers{spread: spread{pkResolutions(ply), s.shards}, item: 'd', group: 'e'}
}
func (s *Store) dispatchMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'w', group: 'x'}
}
func (s *Store) backMarkers(ply int) stageMarkers {
	return stageMarkers{spread: s.runRows(ply), item: 'y', group: 'z'}
}

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

	rkConfig  = "config"
	rkDone    = "done"
	rkBuckets = "nbuckets"
)

func pkRuns(ply int) string        { return fmt.Sprintf("r%02d", ply) }
func pkFinals(ply int) string      { return fmt.Sprintf("f%02d", ply) }
func pkResolutions(ply int) string { return fmt.Sprintf("v%02d", ply) }
func rkPly(ply int) string         { return fmt.Sprintf("%02d", ply) }

// Run records of bucket b sort together: "s<bucket>-...". All run
// records lie in [runsFrom, runsTo).
const (
	runsFrom = "s"
	runsTo   = "t"
)

func bucketPrefix(bucket int) string    { return fmt.Sprintf("s%06d-", bucket) }
func rkSegment(bucket, task int) string { return fmt.Sprintf("%s%07d", bucketPrefix(bucket), task) }
func rkOutput(c Claim, k int) string    { return fmt.Sprintf("%so%s-%04d", bucketPrefix(c.Bucket), c, k) }
func rkBatch(task, batch int) string    { return fmt.Sprintf("m%07d-%05d", task, batch) }
func rkBucketDone(bucket int) string    { return markerKey('c', bucket) }
func rkMergeStats(c Claim) string       { return "x" + c.String() }
func rkFinal(index int) string          { return fmt.Sprintf("%07d", index) }
func rkResolution(index int) string     { return markerKey('d', index) }
func pkNotices(ply, index int) string   { return fmt.Sprintf("n%02d-%07d", ply, index) }
func rkNotice(child, row int) string    { return fmt.Sprintf("%07d-%04d", child, row) }
func rkPayloadRow(row int) string       { return fmt.Sprintf("%05d", row) }
func pkSources(blob string) string      { return "s" + strings.ReplaceAll(blob, "/", "-") }

// Expansion markers: "d<task>"; all lie in [doneFrom, doneTo).
const (
	doneFrom = "d"
	doneTo   = "e"
)

func rkExpansion(task int) string { return markerKey('d', task) }

func expansionMarkers(ply int) stageMarkers {
	return stageMarkers{pk: pkRuns(ply), item: 'd', group: 'e'}
}
func bucketMarkers(ply int) stageMarkers { return stageMarkers{pk: pkRuns(ply), item: 'c', group: 'k'} }
func resolutionMarkers(ply int) stageMarkers {
	return stageMarkers{pk: pkResolutions(ply), item: 'd', group: 'e'}
}

// Merge statistics lie in [statsFrom, statsTo).
const (
	statsFrom = "x"
	statsTo   = "y"
)

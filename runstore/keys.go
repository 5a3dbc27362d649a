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
func rkBucketDone(bucket int) string  { return markerKey('c', bucket) }
func rkFinal(index int) string        { return fmt.Sprintf("%07d", index) }
func rkResolution(index int) string   { return markerKey('d', index) }
func pkNotices(ply, index int) string { return fmt.Sprintf("n%02d-%07d", ply, index) }
func rkNotice(child, row int) string  { return fmt.Sprintf("%07d-%04d", child, row) }
func rkPayloadRow(row int) string     { return fmt.Sprintf("%05d", row) }
func pkSources(blob string) string    { return "s" + strings.ReplaceAll(blob, "/", "-") }

func rkExpansion(task int) string { return markerKey('d', task) }

func expansionMarkers(ply int) stageMarkers {
	return stageMarkers{pk: pkRuns(ply), item: 'd', group: 'e'}
}
func bucketMarkers(ply int) stageMarkers { return stageMarkers{pk: pkRuns(ply), item: 'c', group: 'k'} }
func resolutionMarkers(ply int) stageMarkers {
	return stageMarkers{pk: pkResolutions(ply), item: 'd', group: 'e'}
}

package pipeline

import (
	"github.com/reversi-cloud/reversi/runstore"
	"math"

	"github.com/reversi-cloud/reversi/board"
)

// positions8x8 is the number of canonical positions of each ply of 8x8
// from the usual start: plies 0 to 8 as docs/reference.md gives them, 9
// to 14 as this project's runs counted them (docs/reference.md).
var positions8x8 = []int64{1, 1, 3, 14, 60, 322, 1773, 10649, 67245, 434029, 2958586, 19786652, 137642638, 912004167, 6158976460}

// CountedPlies is how many plies of 8x8, from ply 0, have counted
// positions; EstimatePositions extrapolates past them.
func CountedPlies() int { return len(positions8x8) }

// growth8x8 extends positions8x8 past its last ply: the ratio of its
// last two plies, rounded up (6.69 at ply 11, 6.96 at ply 12, 6.63 at
// ply 13, 6.75 at ply 14).
const growth8x8 = 6.8

// Disk model of the embedded backend, in bytes per position of a run's
// last ply, from the peak disk of the runs to plies 11 to 14
// (docs/performance.md). At its peak a run holds the plies before the
// last (final blobs and backtracking rows), the last ply's expansion
// runs, and its final blobs as they are written, with their backtracking
// rows if the run solves the ply (runstore.Ply.TerminalSources); plus
// what the store keeps whatever the run's size (its log, memtables and
// the free-space reserve it refuses to write into). With combine levels
// the runs of a level go as the level above combines them and the last
// level's as their ranges are merged (runstore.Spent), so the ply holds
// the runs of a level plus some of the next level's, or its final blobs
// plus a range's combined runs. The figures are ply 14's: its final data took
// 6.9 bytes a position when it kept every position's rows, and 2.3
// without them; its expansion runs 6.6 bytes when every edge named its
// parent, and 3.2 when only the edges to terminal children did (the
// target ply of a run that does not solve, expand's layout).
const (
	diskEarlier           = 1.2
	diskExpansion         = 6.6 // as much again for the combined runs
	diskExpansionTerminal = 3.2
	diskFinalKeys         = 2.3
	diskFinalRows         = 4.6
	diskFixed             = 32 << 20
)

// EstimatePositions estimates the canonical positions of ply of a run
// from the usual 8x8 start; ok is false for other boards and starts,
// which the model does not cover.
func EstimatePositions(cfg RunConfig, ply int) (n int64, ok bool) {
	b, err := board.New(cfg.Board)
	if err != nil || cfg.Board != 8 || ply < 0 {
		return 0, false
	}
	if s := cfg.Start; s != (board.Position{}) && b.Canonical(s) != b.Canonical(b.Start()) {
		return 0, false
	}
	if ply < len(positions8x8) {
		return positions8x8[ply], true
	}
	last := len(positions8x8) - 1
	return int64(float64(positions8x8[last]) * math.Pow(growth8x8, float64(ply-last))), true
}

// EstimateDisk estimates the most disk a run on the embedded backend
// takes: ok is false where EstimatePositions has no estimate.
func EstimateDisk(cfg RunConfig) (bytes int64, ok bool) {
	n, ok := EstimatePositions(cfg, cfg.Target)
	if !ok {
		return 0, false
	}
	final, expansion := diskFinalKeys, diskExpansionTerminal
	if cfg.Solve {
		final, expansion = final+diskFinalRows, diskExpansion
	}
	per := diskEarlier + expansion + final
	if levels := estimateLevels(cfg, n); len(levels) > 0 {
		// Each level holds the runs below it and its own groups' runs
		// as they are written; the last level's groups are the fewest.
		top := levels[len(levels)-1]
		per = diskEarlier + max(expansion*(1+1/float64(top.Groups)), final+expansion/float64(top.Ranges))
	}
	return diskFixed + int64(per*float64(n)), true
}

// estimateLevels estimates the combine levels of the target ply of a run
// whose target ply has n positions, from full final blobs and buckets
// (as many as its tasks allow: runstore.Sizes.MostBuckets).
func estimateLevels(cfg RunConfig, n int64) []runstore.CombineLevel {
	if cfg.Target < 1 {
		return nil
	}
	prev, _ := EstimatePositions(cfg, cfg.Target-1)
	sizes := cfg.WithDefaults().Sizes
	blob := int64(sizes.BlobPositionsAt(cfg.Target - 1))
	tasks := (prev + blob - 1) / blob
	bucket := int64(sizes.BlobPositionsAt(cfg.Target)) * int64(sizes.BucketBlobsAt(cfg.Target))
	buckets := min((n+bucket-1)/bucket, int64(sizes.MostBuckets(int(tasks))))
	return sizes.Levels(int(tasks), int(buckets))
}

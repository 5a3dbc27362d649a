package pipeline

import (
	"math"

	"github.com/reversi-cloud/reversi/board"
)

// positions8x8 is the number of canonical positions of each ply of 8x8
// from the usual start: plies 0 to 8 as docs/reference.md gives them, 9
// to 13 as this project's runs counted them (docs/reference.md).
var positions8x8 = []int64{1, 1, 3, 14, 60, 322, 1773, 10649, 67245, 434029, 2958586, 19786652, 137642638, 912004167}

// growth8x8 extends positions8x8 past ply 13: the ratio of its last two
// plies, rounded up (6.69 at ply 11, 6.96 at ply 12, 6.63 at ply 13).
const growth8x8 = 6.7

// Disk model of the embedded backend, from the peak disk of the
// benchmark harness's runs with the default sizes (docs/performance.md):
// about 11 bytes per position of the last ply at ply 11, 12 at ply 12
// and 13.5 at ply 13, dominated by that ply's expansion blobs and final
// blobs, plus what the store keeps whatever the run's size (its log,
// memtables and the free-space reserve it refuses to write into). The
// figure grows by about a byte a ply, so past ply 13 the estimate is low
// by that much (a tenth at ply 14).
const (
	diskPerPosition = 13
	diskFixed       = 32 << 20
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
	return diskFixed + int64(diskPerPosition*float64(n)), true
}

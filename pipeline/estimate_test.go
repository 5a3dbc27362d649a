package pipeline

import (
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestEstimatePositions checks the table against the published counts it
// restates, and that past it the estimate grows by the model's factor.
func TestEstimatePositions(t *testing.T) {
	cfg := RunConfig{Config: runstore.Config{Board: 8}}
	for ply, want := range testkit.Ref8x8Positions {
		if got, ok := EstimatePositions(cfg, ply); !ok || got != want {
			t.Errorf("ply %d: %d (%v), want %d", ply, got, ok, want)
		}
	}
	last := CountedPlies() - 1
	counted, _ := EstimatePositions(cfg, last)
	next, ok := EstimatePositions(cfg, last+1)
	if !ok || next != int64(float64(counted)*growth8x8) {
		t.Errorf("ply %d: %d, want %d x %.1f", last+1, next, counted, growth8x8)
	}
	for _, c := range []RunConfig{{Config: runstore.Config{Board: 6}}, {Config: runstore.Config{Board: 4}}, {Config: runstore.Config{Board: 8, Start: board.Position{Occ: 0x0000001818000000 | 1, White: 0x0000000810000000}}}} {
		if _, ok := EstimatePositions(c, 5); ok {
			t.Errorf("%+v: an estimate where the model has none", c)
		}
	}
}

// TestEstimateDiskAgainstMeasured checks the disk model against the peak
// disk of measured runs (docs/performance.md, in MB): the benchmark
// runs with the default sizes to plies 11 to 13 (2026-11-29, e08dcaa)
// and 14 (3911d9e, merged in wide buckets). Less diskFixed, which is mostly the free space the
// store keeps in reserve and du never sees, the estimate must not fall
// short of one by more than a tenth, nor exceed it by more than a half.
func TestEstimateDiskAgainstMeasured(t *testing.T) {
	defaults := func(ply, fanIn int) RunConfig {
		return RunConfig{Config: runstore.Config{Board: 8, Target: ply, Sizes: runstore.Sizes{BlobPositions: 65536, BucketBlobs: 16, GrowFrom: 11, MergeFanIn: fanIn}}}
	}
	for _, m := range []struct {
		cfg      RunConfig
		measured int64
	}{
		{defaults(11, 1024), 116e6},
		{defaults(12, 1024), 885e6},
		{defaults(13, 1024), 6096e6},
		{defaults(14, 1024), 41471e6},
	} {
		est, ok := EstimateDisk(m.cfg)
		est -= diskFixed
		if !ok || float64(est) < 0.9*float64(m.measured) || float64(est) > 1.5*float64(m.measured) {
			t.Errorf("ply %d, fan-in %d: estimate %d bytes, measured %d", m.cfg.Target, m.cfg.MergeFanIn, est, m.measured)
		}
	}
}

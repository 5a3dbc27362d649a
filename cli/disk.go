package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reversi-cloud/reversi/internal/du"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// checkDisk refuses a run on the embedded backend (or the simulated
// account over it) whose disk estimate
// (pipeline.EstimateDisk) clearly exceeds the space it can have: what
// its directory's file system has free plus what the run already keeps
// there (a resumed run has written part of it). "Clearly" is below three
// quarters of the estimate, which is itself within a few tens of percent;
// a run that is short by less finds out at the full disk, stops in one
// line and resumes once space is freed.
func checkDisk(sf storageFlags, cfg pipeline.RunConfig) error {
	if sf.kind == "azure" {
		return nil
	}
	est, ok := pipeline.EstimateDisk(cfg)
	if !ok {
		return nil
	}
	dir := sf.data
	if dir == "" {
		dir = os.TempDir() // where the store spills
	}
	free, err := embedded.FreeSpace(existing(dir))
	if err != nil {
		return nil // unknown: the full disk, if it comes, says so
	}
	have := int64(free) + du.Bytes(sf.data)
	if float64(have) >= 0.75*float64(est) {
		return nil
	}
	n, _ := pipeline.EstimatePositions(cfg, cfg.Target)
	return fmt.Errorf("8x8 to ply %d needs about %s of disk (an estimate, from %s positions at ply %d), but %s has %s free; free some space or give -data a directory on a larger disk",
		cfg.Target, bytesText(est), positionsText(n), cfg.Target, dir, bytesText(have))
}

// existing is dir or its nearest ancestor that exists, for statfs.
func existing(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// positionsText is n positions, in millions from a million.
func positionsText(n int64) string {
	if n < 1e6 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.0f million", float64(n)/1e6)
}

package cli

import (
	"flag"

	"github.com/reversi-cloud/reversi/pipeline"
)

// sizeFlags are the size rules a run records past its blob and bucket
// sizes (runstore.Sizes), shared by seed and enumerate.
type sizeFlags struct{ growFrom, fanIn int }

func (f *sizeFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.growFrom, "grow-from", pipeline.DefaultGrowFrom,
		"pipeline: from this ply on, final blobs and buckets double in size each ply (0: never), so that merge reads grow with the edges, not faster")
	fs.IntVar(&f.fanIn, "merge-fan-in", pipeline.DefaultMergeFanIn,
		"pipeline: the most expansion runs a bucket merge reads; a ply fed by more is first combined in groups of at most this many (0: no limit)")
}

func (f sizeFlags) apply(cfg *pipeline.RunConfig) { cfg.GrowFrom, cfg.MergeFanIn = f.growFrom, f.fanIn }

package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
)

// settingsFlags are the flags that set a run's settings, shared by seed
// and enumerate: -board, -plies, the size rules (runstore.Sizes) and
// startFlags. Their defaults are pipeline.DefaultRunConfig's, so the
// help shows the defaults a run gets and a run given no flags has them.
type settingsFlags struct {
	board, plies int
	// blobPositions, bucketBlobs, growFrom and fanIn are the fields of
	// runstore.Sizes.
	blobPositions, bucketBlobs, growFrom, fanIn int
	startFlags
}

// register adds the flags to fs; prefix starts the help of the flags
// that only the pipeline reads, for commands that also run another
// engine.
func (f *settingsFlags) register(fs *flag.FlagSet, prefix string) {
	d := pipeline.DefaultRunConfig()
	fs.IntVar(&f.board, "board", d.Board, "board size: 4, 6 or 8")
	fs.IntVar(&f.plies, "plies", 0, fmt.Sprintf("target ply (default: the end of the game on 4x4, %d on 6x6 and 8x8)", pipeline.DefaultTarget(8)))
	fs.IntVar(&f.blobPositions, "blob-positions", d.BlobPositions, prefix+"positions per final blob")
	fs.IntVar(&f.bucketBlobs, "bucket-blobs", d.BucketBlobs, prefix+"final blobs per bucket: each bucket is merged by one task")
	fs.IntVar(&f.growFrom, "grow-from", d.GrowFrom,
		prefix+"from this ply on, final blobs and buckets double in size each ply (0: never), so that merge reads grow with the edges, not faster")
	fs.IntVar(&f.fanIn, "merge-fan-in", d.MergeFanIn,
		prefix+"the most expansion runs a bucket merge reads (twice as many in a ply cut into at most 12 wide buckets); a ply fed by more is first combined in groups of at most this many (0: no limit)")
	f.startFlags.register(fs)
}

// config is the configuration of run name that the flags define. Only a
// -plies left out means a default, the target for the board and start
// (pipeline.AutoTarget); every value given is checked, none replaced.
func (f *settingsFlags) config(fs *flag.FlagSet, name string) (pipeline.RunConfig, error) {
	cfg := pipeline.DefaultRunConfig()
	cfg.Name, cfg.Board, cfg.Target = name, f.board, f.plies
	cfg.Sizes = runstore.NewSizes(f.blobPositions, f.bucketBlobs, f.growFrom, f.fanIn)
	if err := f.startFlags.apply(fs, &cfg); err != nil {
		return pipeline.RunConfig{}, err
	}
	b, err := board.New(cfg.Board)
	if err != nil {
		return pipeline.RunConfig{}, usagef("-board %d: must be 4, 6 or 8", cfg.Board)
	}
	if !given(fs, "plies") {
		cfg.Target = pipeline.AutoTarget
	}
	cfg = cfg.WithDerived()
	if max := (message.Origin{Board: b, Start: cfg.Start}).LastPly(); given(fs, "plies") && (f.plies < 0 || f.plies > max) {
		return pipeline.RunConfig{}, usagef("-plies %d: must be 0 to %d (a %dx%d game from the start ends at ply %d)", f.plies, max, cfg.Board, cfg.Board, max)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, flagError(fs, err)
	}
	return cfg, nil
}

// runSettings are the flags that set a run's settings (settingsFlags,
// startFlags), each with the setting it sets and its value in a
// configuration: the names by which errors call them, and what a resumed
// run's flags must not change (resumeConfig).
var runSettings = []struct {
	flag    string
	setting pipeline.Setting
	value   func(pipeline.RunConfig) any
}{
	{"board", pipeline.SettingBoard, func(c pipeline.RunConfig) any { return c.Board }},
	{"plies", pipeline.SettingTarget, func(c pipeline.RunConfig) any { return c.Target }},
	{"blob-positions", pipeline.SettingBlobPositions, func(c pipeline.RunConfig) any { return c.BlobPositions }},
	{"bucket-blobs", pipeline.SettingBucketBlobs, func(c pipeline.RunConfig) any { return c.BucketBlobs }},
	{"grow-from", pipeline.SettingGrowFrom, func(c pipeline.RunConfig) any { return c.GrowFrom }},
	{"merge-fan-in", pipeline.SettingMergeFanIn, func(c pipeline.RunConfig) any { return c.MergeFanIn }},
	{"solve-positions", pipeline.SettingSolvePositions, func(c pipeline.RunConfig) any { return c.SolvePositions }},
	{"solve-mode", pipeline.SettingSolveMode, func(c pipeline.RunConfig) any { return c.SolveMode }},
	{"queue-shards", pipeline.SettingQueueShards, func(c pipeline.RunConfig) any { return c.QueueShards }},
	{"partition-shards", pipeline.SettingPartitionShards, func(c pipeline.RunConfig) any { return c.PartitionShards }},
}

// flagError returns a configuration's error as a usage error, naming the
// flag that set the setting it refuses when one was given:
// "-blob-positions 0: must be 1 to 4194304", not "blob positions 0".
func flagError(fs *flag.FlagSet, err error) error {
	var se *pipeline.SettingError
	if errors.As(err, &se) {
		for _, s := range runSettings {
			if s.setting == se.Setting && given(fs, s.flag) {
				return usagef("-%s %s: %s", s.flag, se.Value, se.Rule)
			}
		}
	}
	return usageError{err.Error()}
}

package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
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
// configuration: the names by which errors call them, what a resumed
// run's flags must not change (resumeConfig), and the command line that
// continues a run (runFlags).
var runSettings = []struct {
	flag    string
	setting pipeline.Setting
	value   func(pipeline.RunConfig) any
	// arg is the flag's argument that sets value: nil means value as
	// fmt prints it, "" a bool flag set by its name alone.
	arg func(pipeline.RunConfig) string
	// needed says whether a command line that continues the run gives
	// the flag: nil means always; the others only where the run's value
	// is not the default.
	needed func(pipeline.RunConfig) bool
}{
	{"board", pipeline.SettingBoard, func(c pipeline.RunConfig) any { return c.Board }, nil, nil},
	{"plies", pipeline.SettingTarget, func(c pipeline.RunConfig) any { return c.Target }, nil, nil},
	{"blob-positions", pipeline.SettingBlobPositions, func(c pipeline.RunConfig) any { return c.BlobPositions }, nil, nil},
	{"bucket-blobs", pipeline.SettingBucketBlobs, func(c pipeline.RunConfig) any { return c.BucketBlobs }, nil, nil},
	{"grow-from", pipeline.SettingGrowFrom, func(c pipeline.RunConfig) any { return c.GrowFrom }, nil, nil},
	{"merge-fan-in", pipeline.SettingMergeFanIn, func(c pipeline.RunConfig) any { return c.MergeFanIn }, nil, nil},
	{"start", pipeline.SettingStart, func(c pipeline.RunConfig) any { return c.Start },
		func(c pipeline.RunConfig) string {
			return shellQuote(solve.FormatPosition(board.MustNew(c.Board), c.Start))
		},
		func(c pipeline.RunConfig) bool { return c.Start != board.MustNew(c.Board).Start() }},
	{"solve", pipeline.SettingSolve, func(c pipeline.RunConfig) any { return c.Solve },
		func(pipeline.RunConfig) string { return "" }, func(c pipeline.RunConfig) bool { return c.Solve }},
	{"solve-positions", pipeline.SettingSolvePositions, func(c pipeline.RunConfig) any { return c.SolvePositions },
		nil, func(c pipeline.RunConfig) bool { return c.Solve }},
	{"solve-mode", pipeline.SettingSolveMode, func(c pipeline.RunConfig) any { return c.SolveMode },
		nil, func(c pipeline.RunConfig) bool { return c.Solve && c.SolveMode != runstore.SolveAll }},
	{"queue-shards", pipeline.SettingQueueShards, func(c pipeline.RunConfig) any { return c.QueueShards },
		nil, func(c pipeline.RunConfig) bool { return c.QueueShards > 1 }},
	{"partition-shards", pipeline.SettingPartitionShards, func(c pipeline.RunConfig) any { return c.PartitionShards },
		nil, func(c pipeline.RunConfig) bool { return c.PartitionShards > 1 }},
}

// runFlags returns the flags that continue run c as it was started: -run
// and each of runSettings the run needs.
func runFlags(c pipeline.RunConfig) string {
	s := "-run " + c.Name
	for _, f := range runSettings {
		if f.needed != nil && !f.needed(c) {
			continue
		}
		s += " -" + f.flag
		arg := fmt.Sprint(f.value(c))
		if f.arg != nil {
			arg = f.arg(c)
		}
		if arg != "" {
			s += " " + arg
		}
	}
	return s
}

// flagText is flag name of fs as it was given: "-plies 9", "-solve".
func flagText(fs *flag.FlagSet, name string) string {
	v := fs.Lookup(name).Value
	if b, ok := v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		if v.String() == "true" {
			return "-" + name
		}
		return "-" + name + "=" + v.String()
	}
	return "-" + name + " " + shellQuote(v.String())
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

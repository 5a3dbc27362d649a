package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// ChildConfig is one in-process engine run in child mode.
type ChildConfig struct {
	Engine     string // yardstick, reference, external or embedded
	Board      int
	Ply        int
	Workers    int    // embedded: worker loops
	Result     string // file for the ChildResult JSON
	CPUProfile string // optional CPU profile file
	// Dir is where an on-disk engine (external, embedded) makes its
	// temporary directory (default: the system's).
	Dir string
}

// RunChild runs one in-process engine and writes its ChildResult. The
// clock covers the enumeration and its report, not process start-up or
// the storage footprint measured afterwards.
func RunChild(ctx context.Context, cfg ChildConfig) error {
	b, err := board.New(cfg.Board)
	if err != nil {
		return err
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("creating the CPU profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("starting the CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res := &ChildResult{}
	start := time.Now()
	switch cfg.Engine {
	case EngineYardstick:
		res.Report = Yardstick(b, cfg.Ply)
	case EngineReference:
		r, err := reference.Enumerate(b, cfg.Ply)
		if err != nil {
			return err
		}
		res.Report = r.Report
	case EngineExternal:
		if res.Report, res.PeakDiskBytes, err = runExternal(cfg, b); err != nil {
			return err
		}
	case EngineEmbedded:
		if res.Report, res.StoredBytes, res.PeakDiskBytes, err = runEmbedded(ctx, cfg, start); err != nil {
			return err
		}
	default:
		return fmt.Errorf("engine %q does not run in process", cfg.Engine)
	}
	if res.Report.WallSeconds == 0 {
		res.Report.WallSeconds = time.Since(start).Seconds()
	}
	res.WallSeconds = res.Report.WallSeconds
	out, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	if err := os.WriteFile(cfg.Result, out, 0o644); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}

// runEmbedded runs the pipeline in this process on the embedded backend,
// exactly as cmd/enumerate does, and reports what the run stored at the
// end and the most disk its store's directory took meanwhile.
func runEmbedded(ctx context.Context, cfg ChildConfig, start time.Time) (rep *report.Report, stored, peakDisk int64, err error) {
	dir, err := os.MkdirTemp(cfg.Dir, "bench-embedded-")
	if err != nil {
		return nil, 0, 0, err
	}
	defer os.RemoveAll(dir)
	raw, err := embedded.Open(embedded.Config{Dir: dir, SpillToDisk: true})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("opening embedded storage: %w", err)
	}
	defer raw.Close()
	disk := sampleDisk(dir, 250*time.Millisecond)
	be := storage.NewMetered(raw)
	// From the defaults, as enumerate's flags: the zero RunConfig has
	// fixed sizes, which is not what a benchmark of the defaults measures.
	rc := pipeline.DefaultRunConfig()
	rc.Name, rc.Board, rc.Target = fmt.Sprintf("bench%d", cfg.Ply), cfg.Board, cfg.Ply
	rep, err = pipeline.RunLocal(ctx, be, rc, cfg.Workers, pipeline.WorkerConfig{}, nil, nil)
	peakDisk = disk.Peak()
	if err != nil {
		return nil, 0, 0, err
	}
	stats := be.Stats()
	rep.WallSeconds = time.Since(start).Seconds()
	rep.SetTransactions(stats.ByCategory())
	run, err := pipeline.OpenRun(ctx, be, rc.Name)
	if err != nil {
		return nil, 0, 0, err
	}
	fp, err := run.Footprint(ctx)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("measuring what the run stored: %w", err)
	}
	return rep, fp.Bytes(), peakDisk, nil
}

// runExternal runs the external counter in a temporary directory of its
// own, and reports the most disk its files took meanwhile.
func runExternal(cfg ChildConfig, b *board.Board) (*report.Report, int64, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "bench-external-")
	if err != nil {
		return nil, 0, fmt.Errorf("making the external counter's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	disk := sampleDisk(dir, 250*time.Millisecond)
	rep, err := External{Dir: dir}.Enumerate(b, cfg.Ply)
	peak := disk.Peak()
	if err != nil {
		return nil, 0, err
	}
	return rep, peak, nil
}

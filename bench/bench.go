// Package bench is the benchmark harness behind cmd/bench: in one run on
// one machine it enumerates 8x8 to each chosen ply with the yardstick (a
// plain single-threaded in-memory enumerator), the reference engine, the
// external counter (a plain hash-bucket enumerator on disk that counts
// forward only), the pipeline on the embedded backend (in-process), and
// the pipeline on Azurite with several cmd/worker processes; it reports wall and CPU time,
// edges per second, storage transactions per edge by category, bytes
// stored per position, peak RSS per process and merge work per position,
// as a Markdown table and a CSV.
//
// Every engine runs in a child process of its own (the harness binary
// re-executed in child mode, or cmd/seed and cmd/worker), so its peak RSS
// and CPU time come from the kernel's accounting of that process alone,
// and no engine inherits another's heap.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/task"
)

// Engine names.
const (
	EngineYardstick = "yardstick"
	EngineReference = "reference"
	EngineExternal  = "external"
	EngineEmbedded  = "embedded"
	EngineAzurite   = "azurite"
)

// Engines lists every engine in the order they run for each ply.
var Engines = []string{EngineYardstick, EngineReference, EngineExternal, EngineEmbedded, EngineAzurite}

// CountsOnly lists the engines that count forward only and decide no
// results (each is unknown): check compares only their positions,
// terminal positions and edges with the yardstick's.
var CountsOnly = []string{EngineExternal}

// Config is one harness run.
type Config struct {
	Board   int      // board size (default 8)
	Plies   []int    // target plies, each a separate run of every engine
	Engines []string // engines to run (default Engines)
	// Workers is the number of worker loops of the in-process pipeline
	// (default: CPUs).
	Workers int
	// Processes is the number of cmd/worker processes on Azurite (default 2).
	Processes int
	// OutDir receives results.md, results.csv, logs and profiles.
	OutDir string
	// Self is the harness binary, re-executed in child mode.
	Self string
	// BinDir holds the seed and worker binaries for Azurite runs.
	BinDir string
	// ConnectionString reaches Azurite (or Azure).
	ConnectionString string
	// AzuritePID is the emulator's process, when the harness started it,
	// so that its CPU time can be reported too.
	AzuritePID int
	// Profile writes a CPU profile of each in-process engine run to OutDir.
	Profile bool
	// Timeout bounds each engine run.
	Timeout time.Duration
	// Log receives progress lines.
	Log io.Writer
	// Command is the command line, for the sentence above results.md's
	// table (Intro); Start is when the run began (default: when Run is
	// called).
	Command string
	Start   time.Time
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.Board == 0 {
		c.Board = 8
	}
	if len(c.Engines) == 0 {
		c.Engines = Engines
	}
	if c.Workers == 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Processes == 0 {
		c.Processes = 2
	}
	if c.OutDir == "" {
		c.OutDir = "bench-out"
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Hour
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// Validate checks a configuration with defaults filled.
func (c Config) Validate() error {
	if c.Board != 4 && c.Board != 6 && c.Board != 8 {
		return fmt.Errorf("board %d: must be 4, 6 or 8", c.Board)
	}
	if len(c.Plies) == 0 {
		return errors.New("no plies to run")
	}
	for _, p := range c.Plies {
		if p < 1 || p > c.Board*c.Board-4 {
			return fmt.Errorf("ply %d: must be 1 to %d on %dx%d", p, c.Board*c.Board-4, c.Board, c.Board)
		}
	}
	for _, e := range c.Engines {
		if !slices.Contains(Engines, e) {
			return fmt.Errorf("engine %q: must be one of %s", e, strings.Join(Engines, ", "))
		}
	}
	if c.Workers < 1 || c.Workers > 256 {
		return fmt.Errorf("workers %d: must be 1 to 256", c.Workers)
	}
	if c.Processes < 1 || c.Processes > 64 {
		return fmt.Errorf("processes %d: must be 1 to 64", c.Processes)
	}
	if c.Self == "" {
		return errors.New("the harness binary (Self) is not set")
	}
	if slices.Contains(c.Engines, EngineAzurite) && (c.BinDir == "" || c.ConnectionString == "") {
		return errors.New("azurite runs need the seed and worker binaries and a connection string")
	}
	return nil
}

// Row is one engine's run to one ply.
type Row struct {
	Engine    string
	Ply       int
	Processes int     // worker processes (1 for in-process engines)
	Load      float64 // 1-minute load average when the run started
	Wall      float64 // seconds
	CPU       float64 // user+system seconds of all its processes
	ServerCPU float64 // Azurite's user+system seconds, when known
	Positions int64   // through Ply
	Edges     int64   // through Ply
	// Storage transactions by category (see task.Categories):
	// enumeration, dedup, results (backtracking rows, notices and result
	// blobs), other (compensation and control: queue polling, statistics).
	TxEnum, TxDedup, TxResults, TxOther int64
	StoredBytes                         int64
	PeakDisk                            int64   // bytes; 0 when not measured
	PeakRSS                             []int64 // bytes, per process
	MergedKeys                          int64
	Root                                string
	// Check is "ok" when the per-ply counts and results (counts only, for
	// the engines of CountsOnly) equal the yardstick's (or the
	// reference's), the difference otherwise, or "-" when there was
	// nothing to compare with.
	Check string
}

// TxTotal is every storage transaction of the run.
func (r Row) TxTotal() int64 { return r.TxEnum + r.TxDedup + r.TxResults + r.TxOther }

// MaxRSS is the largest peak RSS of the run's processes.
func (r Row) MaxRSS() int64 { return slices.Max(append([]int64{0}, r.PeakRSS...)) }

func perEdge(n int64, r Row) float64 {
	if r.Edges == 0 {
		return 0
	}
	return float64(n) / float64(r.Edges)
}

func perPosition(n int64, r Row) float64 {
	if r.Positions == 0 {
		return 0
	}
	return float64(n) / float64(r.Positions)
}

// Run runs every engine to every ply and writes results.md and
// results.csv to OutDir as it goes. It returns the rows, and an error if a
// run failed or an engine's counts differ from the yardstick's.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("making the output directory: %w", err)
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	intro := ""
	if cfg.Command != "" {
		intro = Intro(cfg.Command, cfg.Start, Machine())
	}
	var rows []Row
	var mismatches []string
	for _, ply := range cfg.Plies {
		var want *report.Report
		for _, engine := range cfg.Engines {
			fmt.Fprintf(cfg.Log, "bench: %s, %dx%d through ply %d ...\n", engine, cfg.Board, cfg.Board, ply)
			row, rep, err := runOne(ctx, cfg, engine, ply)
			if err != nil {
				return rows, fmt.Errorf("%s through ply %d: %w", engine, ply, err)
			}
			row.Check = "-"
			if want != nil {
				row.Check = "ok"
				if d := check(engine, want, rep); d != "" {
					row.Check = d
					mismatches = append(mismatches, fmt.Sprintf("%s through ply %d: %s", engine, ply, d))
				}
			} else if engine == EngineYardstick || engine == EngineReference {
				want = rep
			}
			rows = append(rows, row)
			fmt.Fprintf(cfg.Log, "bench: %s through ply %d: %.2fs wall, %.2fs CPU, %.0f edges/s, %.4f transactions/edge, peak RSS %d MiB, check %s\n",
				engine, ply, row.Wall, row.CPU, float64(row.Edges)/row.Wall, perEdge(row.TxTotal(), row), row.MaxRSS()>>20, row.Check)
			if err := WriteFiles(cfg.OutDir, intro, rows); err != nil {
				return rows, err
			}
		}
	}
	if len(mismatches) > 0 {
		return rows, fmt.Errorf("counts differ from the yardstick: %s", strings.Join(mismatches, "; "))
	}
	return rows, nil
}

// check compares an engine's report with the yardstick's (or the
// reference's): the counts only for the engines of CountsOnly, the counts
// and results for the others. It returns the first difference, or "".
func check(engine string, want, got *report.Report) string {
	if slices.Contains(CountsOnly, engine) {
		return report.DiffCounts(want, got)
	}
	return report.Diff(want, got)
}

func runOne(ctx context.Context, cfg Config, engine string, ply int) (Row, *report.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	row := Row{Engine: engine, Ply: ply, Processes: 1, Load: loadAverage()}
	var res *ChildResult
	var err error
	if engine == EngineAzurite {
		res, err = runAzurite(ctx, cfg, ply, &row)
	} else {
		res, err = runChild(ctx, cfg, engine, ply, &row)
	}
	if err != nil {
		return row, nil, err
	}
	rep := res.Report
	row.Wall = res.WallSeconds
	row.Positions, row.Edges, row.Root = rep.Positions(), rep.Edges(), rep.Root
	for _, p := range rep.Plies {
		row.MergedKeys += p.MergedKeys
	}
	for cat, n := range rep.TransactionsByCategory {
		switch cat {
		case task.CategoryEnumeration:
			row.TxEnum += n
		case task.CategoryDedup:
			row.TxDedup += n
		case task.CategoryBacktrack:
			row.TxResults += n
		default:
			row.TxOther += n
		}
	}
	row.StoredBytes, row.PeakDisk = res.StoredBytes, res.PeakDiskBytes
	return row, rep, nil
}

// ChildResult is what an engine run reports to the harness.
type ChildResult struct {
	Report      *report.Report `json:"report"`
	WallSeconds float64        `json:"wall_seconds"`
	StoredBytes int64          `json:"stored_bytes"`
	// PeakDiskBytes is the most disk the run's files took while it ran
	// (the on-disk engines: embedded and external).
	PeakDiskBytes int64 `json:"peak_disk_bytes,omitempty"`
}

// runChild runs an in-process engine in a child process of its own.
func runChild(ctx context.Context, cfg Config, engine string, ply int, row *Row) (*ChildResult, error) {
	resPath := filepath.Join(cfg.OutDir, fmt.Sprintf("%s-%d.json", engine, ply))
	args := []string{"-child", engine, "-board", fmt.Sprint(cfg.Board), "-plies", fmt.Sprint(ply),
		"-workers", fmt.Sprint(cfg.Workers), "-result", resPath, "-data", cfg.OutDir}
	if cfg.Profile {
		args = append(args, "-cpuprofile", filepath.Join(cfg.OutDir, fmt.Sprintf("cpu-%s-%d.pprof", engine, ply)))
	}
	logPath := filepath.Join(cfg.OutDir, fmt.Sprintf("%s-%d.log", engine, ply))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the child's log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, cfg.Self, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		out, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("child run (log in %s): %w: %s", logPath, err, tail(string(out)))
	}
	cpu, rss := usage(cmd.ProcessState)
	row.CPU, row.PeakRSS = cpu, []int64{rss}
	return readResult(resPath)
}

func readResult(path string) (*ChildResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the child's result: %w", err)
	}
	var res ChildResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("decoding the child's result %s: %w", path, err)
	}
	if res.Report == nil {
		return nil, fmt.Errorf("the child's result %s holds no report", path)
	}
	return &res, nil
}

// usage is a finished process's CPU seconds and peak RSS in bytes.
func usage(ps *os.ProcessState) (float64, int64) {
	cpu := (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return cpu, ru.Maxrss * 1024 // Linux reports kilobytes
	}
	return cpu, 0
}

// loadAverage is the 1-minute load average, or 0 where /proc is missing.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscanf(string(b), "%f", &l)
	return l
}

// tail keeps the end of a process's output for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reversi-cloud/reversi/bench"
	"github.com/reversi-cloud/reversi/storage/azure"
)

const benchIntro = `
bench measures every engine on one machine in one run: for each -plies
target it enumerates 8x8 with the yardstick (a plain single-threaded
in-memory enumerator), the reference engine, the external counter (a
plain hash-bucket enumerator on disk, in -out, that counts positions,
terminal positions and edges but decides no results), the pipeline on
the embedded backend (in one process, its store in -out) and the
pipeline on Azurite (cmd/seed, then -processes cmd/worker processes).
Each engine runs in a process of its own, so peak RSS and CPU time are
its own. Results go to -out as results.md and results.csv; any engine
whose counts (and results, but for the external counter) differ from
the yardstick's fails the run.

Azurite: AZURE_STORAGE_CONNECTION_STRING if set, else a private one
started with -azurite-script. The seed and worker binaries come from -bin,
or are built with go build into a temporary directory.

Usage: go run ./cmd/bench [-plies 8-11] [-engines yardstick,reference,external,embedded,azurite]`

// Bench is cmd/bench.
func Bench(env Env) int { return finish("bench", env, runBench(env)) }

func runBench(env Env) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	plies := fs.String("plies", "8-11", "target plies: a list (8,10), a range (8-11), or both")
	engines := fs.String("engines", strings.Join(bench.Engines, ","), "engines to run, comma-separated")
	size := fs.Int("board", 8, "board size: 4, 6 or 8")
	workers := fs.Int("workers", 0, "worker loops of the in-process pipeline (default: CPUs)")
	processes := fs.Int("processes", 2, "cmd/worker processes on Azurite")
	out := fs.String("out", "bench-out", "output directory")
	bin := fs.String("bin", "", "directory holding the seed and worker binaries (default: build them)")
	script := fs.String("azurite-script", "scripts/azurite.sh", "script that starts Azurite when AZURE_STORAGE_CONNECTION_STRING is not set")
	profile := fs.Bool("profile", false, "write a CPU profile of each in-process run to -out")
	timeout := fs.Duration("timeout", 2*time.Hour, "limit for each engine run")
	// Child mode: one in-process engine run, started by the harness itself.
	child := fs.String("child", "", "internal: run this in-process engine once and write -result")
	result := fs.String("result", "", "internal: child-mode result file")
	cpuProfile := fs.String("cpuprofile", "", "internal: child-mode CPU profile file")
	data := fs.String("data", "", "internal: child-mode directory in which an on-disk engine makes its temporary directory (default: the system's)")
	if help, err := parse(fs, env, benchIntro); help || err != nil {
		return err
	}
	// Zero -workers means the CPUs, as the help says; the rest must be given.
	if err := positive(fs, "board", "processes", "timeout"); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *child != "" {
		ply, err := strconv.Atoi(*plies)
		if err != nil || *result == "" {
			return usagef("-child needs one -plies value and -result")
		}
		return bench.RunChild(ctx, bench.ChildConfig{Engine: *child, Board: *size, Ply: ply, Workers: max(*workers, 1), Result: *result, CPUProfile: *cpuProfile, Dir: *data})
	}
	list, err := parsePlies(*plies)
	if err != nil {
		return err
	}
	cfg := bench.Config{Board: *size, Plies: list, Engines: strings.Split(*engines, ","), Workers: *workers, Processes: *processes,
		OutDir: *out, BinDir: *bin, Profile: *profile, Timeout: *timeout, Log: env.Stderr,
		Command: strings.Join(append([]string{"bench"}, env.Args...), " "), Start: time.Now()}.WithDefaults()
	if cfg.Self, err = os.Executable(); err != nil {
		return fmt.Errorf("finding the harness binary: %w", err)
	}
	if slices.Contains(cfg.Engines, bench.EngineAzurite) {
		if cfg.BinDir == "" {
			dir, err := os.MkdirTemp("", "bench-bin-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := buildCommands(ctx, dir, "seed", "worker"); err != nil {
				return err
			}
			cfg.BinDir = dir
		}
		cfg.ConnectionString = strings.TrimSpace(env.Getenv(azure.EnvConnectionString))
		if cfg.ConnectionString == "" {
			a, err := bench.StartAzurite(ctx, *script)
			if err != nil {
				return err
			}
			defer a.Stop()
			cfg.ConnectionString, cfg.AzuritePID = a.ConnectionString, a.PID()
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	rows, err := bench.Run(ctx, cfg)
	if len(rows) > 0 {
		fmt.Fprintf(env.Stdout, "%s\n\n%s\nwritten to %s and %s\n", bench.Intro(cfg.Command, cfg.Start, bench.Machine()), bench.Markdown(rows), filepath.Join(cfg.OutDir, bench.MarkdownFile), filepath.Join(cfg.OutDir, bench.CSVFile))
	}
	return err
}

// parsePlies reads "8-11", "8,10" or a mix.
func parsePlies(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange && err == nil {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || b < a {
			return nil, usagef("-plies %q: want plies like 8-11 or 8,10", s)
		}
		for p := a; p <= b; p++ {
			out = append(out, p)
		}
	}
	return out, nil
}

// buildCommands builds cmd/NAME binaries into dir.
func buildCommands(ctx context.Context, dir string, names ...string) error {
	for _, n := range names {
		out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, n), "github.com/reversi-cloud/reversi/cmd/"+n).CombinedOutput()
		if err != nil {
			return fmt.Errorf("building cmd/%s: %w: %s", n, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

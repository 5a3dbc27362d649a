package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
)

// runAzurite runs the pipeline as separate processes: cmd/seed, then
// cfg.Processes cmd/worker processes until the run is complete. The clock
// starts before the seed and stops when the last worker exits. The
// report, the transactions every worker recorded and the footprint are
// read afterwards, and the run's resources are dropped, so Azurite does
// not carry one run's data into the next.
func runAzurite(ctx context.Context, cfg Config, ply int, row *Row) (*ChildResult, error) {
	name := fmt.Sprintf("bench%d%d", ply, time.Now().UnixNano()%1e9)
	env := append(os.Environ(), azure.EnvConnectionString+"="+cfg.ConnectionString)
	command := func(bin string, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, filepath.Join(cfg.BinDir, bin), args...)
		c.Env = env
		return c
	}
	serverCPU := processCPU(cfg.AzuritePID)
	start := time.Now()
	if out, err := command("seed", "-run", name, "-board", fmt.Sprint(cfg.Board), "-plies", fmt.Sprint(ply)).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("seed: %w: %s", err, tail(string(out)))
	}
	procs := make([]*exec.Cmd, cfg.Processes)
	logs := make([]bytes.Buffer, cfg.Processes)
	for i := range procs {
		procs[i] = command("worker", "-run", name, "-exit-when-done", "-log-level", "warn", "-id", fmt.Sprintf("w%d", i))
		procs[i].Stdout, procs[i].Stderr = &logs[i], &logs[i]
		if err := procs[i].Start(); err != nil {
			return nil, fmt.Errorf("starting worker %d: %w", i, err)
		}
	}
	var errs []error
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w: %s", i, err, tail(logs[i].String())))
		}
	}
	wall := time.Since(start).Seconds()
	if cfg.AzuritePID > 0 {
		row.ServerCPU = processCPU(cfg.AzuritePID) - serverCPU
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	row.Processes, row.PeakRSS = cfg.Processes, nil
	for _, p := range procs {
		cpu, rss := usage(p.ProcessState)
		row.CPU += cpu
		row.PeakRSS = append(row.PeakRSS, rss)
	}
	if err := logFile(cfg.OutDir, fmt.Sprintf("azurite-%d-workers.log", ply), logs); err != nil {
		return nil, err
	}

	be, err := azure.Open(ctx, azure.Config{ConnectionString: cfg.ConnectionString})
	if err != nil {
		return nil, fmt.Errorf("opening Azurite: %w", err)
	}
	defer be.Close()
	defer dropRun(context.WithoutCancel(ctx), be, name)
	run, err := pipeline.OpenRun(ctx, be, name)
	if err != nil {
		return nil, err
	}
	rep, err := run.Report(ctx)
	if err != nil {
		return nil, err
	}
	if !rep.Complete {
		return nil, fmt.Errorf("the workers exited but run %s is not complete", name)
	}
	stats, err := run.RecordedStats(ctx)
	if err != nil {
		return nil, err
	}
	rep.WallSeconds = wall
	rep.SetTransactions(stats.Storage.ByCategory())
	fp, err := run.Footprint(ctx)
	if err != nil {
		return nil, fmt.Errorf("measuring what the run stored: %w", err)
	}
	return &ChildResult{Report: rep, WallSeconds: wall, StoredBytes: fp.Bytes()}, nil
}

// dropRun deletes a run's queues, container and tables, best effort: a
// leftover only costs Azurite memory.
func dropRun(ctx context.Context, be storage.Backend, name string) {
	if r, err := pipeline.OpenRun(ctx, be, name); err == nil {
		_ = r.Drop(ctx)
	}
}

func logFile(dir, name string, logs []bytes.Buffer) error {
	var all strings.Builder
	for i := range logs {
		fmt.Fprintf(&all, "== worker %d\n%s\n", i, logs[i].String())
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(all.String()), 0o644); err != nil {
		return fmt.Errorf("writing worker logs: %w", err)
	}
	return nil
}

// Azurite is an emulator the harness started and must stop.
type Azurite struct {
	script, stateDir string
	// ConnectionString reaches it.
	ConnectionString string
}

// StartAzurite starts a private Azurite with scripts/azurite.sh (in
// memory, on free ports, state in a fresh directory).
func StartAzurite(ctx context.Context, script string) (*Azurite, error) {
	dir, err := os.MkdirTemp("", "bench-azurite-")
	if err != nil {
		return nil, err
	}
	a := &Azurite{script: script, stateDir: dir}
	if out, err := a.cmd(ctx, "start").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting Azurite with %s: %w: %s", script, err, tail(string(out)))
	}
	out, err := a.cmd(ctx, "connection-string").Output()
	if err != nil {
		a.Stop()
		return nil, fmt.Errorf("reading Azurite's connection string: %w", err)
	}
	a.ConnectionString = strings.TrimSpace(string(out))
	return a, nil
}

func (a *Azurite) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, a.script, args...)
	c.Env = append(os.Environ(), "AZURITE_STATE_DIR="+a.stateDir)
	return c
}

// PID is the emulator's process id, or 0 if unknown.
func (a *Azurite) PID() int {
	b, err := os.ReadFile(filepath.Join(a.stateDir, "pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// processCPU is a running process's user and system CPU seconds so far,
// from /proc (0 if unavailable).
func processCPU(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: utime and stime are the 12th and 13th, in clock ticks.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

// Stop stops the emulator and removes its state.
func (a *Azurite) Stop() {
	_ = a.cmd(context.Background(), "stop").Run()
	os.RemoveAll(a.stateDir)
}

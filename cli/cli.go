// Package cli implements the commands behind cmd/: flag parsing with
// one-line errors, storage selection, logging, and progress. Only the
// mains read the process environment; they pass it in here.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/sim"
)

// Env is what a command gets from its process.
type Env struct {
	Args   []string // without the program name
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StderrTerminal says Stderr is a terminal, where a status line can
	// be rewritten in place; in a file or a pipe each would be kept.
	StderrTerminal bool
	// Exit ends the process at once: a second Ctrl-C. Nil in tests,
	// where a second interrupt is ignored.
	Exit func(code int)
}

// OSEnv is the real process environment; only cmd/ mains call it.
func OSEnv() Env {
	return Env{Args: os.Args[1:], Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StderrTerminal: isTerminal(os.Stderr), Exit: os.Exit}
}

// isTerminal reports whether f is a character device: a terminal, not a
// file or a pipe. /dev/null is one too, where a rewritten status line
// does no harm; the test needs no terminal system call, which differs
// from one system to the next.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Exit codes.
const (
	ExitOK          = 0
	ExitFail        = 1   // the work failed or a check found a problem
	ExitUsage       = 2   // bad flags
	ExitInterrupted = 130 // SIGINT or SIGTERM, as shells report 128+SIGINT
)

// usageError is a bad flag or argument: one line, exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// parse parses flags, turning the flag package's errors into one line.
func parse(fs *flag.FlagSet, env Env, intro string) (help bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, env.Stdout, intro)
			return true, nil
		}
		return false, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return false, usagef("unexpected argument %q", fs.Arg(0))
	}
	return false, nil
}

func printUsage(fs *flag.FlagSet, w io.Writer, intro string) {
	fmt.Fprintf(w, "%s\n\nFlags:\n", strings.TrimSpace(intro))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// finish turns a command's error into its exit code and a one-line message.
func finish(name string, env Env, err error) int {
	if err == nil {
		return ExitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "%s: %s (run %s -h for help)\n", name, ue.msg, name)
		return ExitUsage
	}
	var ie interruptedError
	if errors.As(err, &ie) {
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, oneLine(ie.msg))
		return ExitInterrupted
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, oneLine(err.Error()))
	return ExitFail
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

// storageFlags selects and configures the backend.
type storageFlags struct {
	kind string
	data string
	def  string // the command's backend when neither flag is given
	// sim configures -storage sim, which only a command that runs a
	// whole run in its process offers (registerSim).
	sim     sim.Config
	simOK   bool
	simMBps float64
	simBE   *sim.Backend // the account open opened
	fs      *flag.FlagSet

	// full, when set before open, is called with the error of every
	// storage call refused for lack of disk space (see stopWhenFull).
	full func(error)
	// accounts is how many storage accounts open opened.
	accounts int
}

func (s *storageFlags) register(fs *flag.FlagSet, def string) {
	s.def, s.fs = def, fs
	dflt := "(default embedded)"
	if def != "embedded" {
		dflt = fmt.Sprintf("(default %s, or embedded with -data)", def)
	}
	sims := ""
	if s.simOK {
		sims = simUsage
	}
	fs.StringVar(&s.kind, "storage", "", "storage backend: embedded (in this process, no setup)"+sims+" or azure (AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with DefaultAzureCredential; Azurite works too; more accounts as AZURE_STORAGE_CONNECTION_STRING_2, _3 ... or AZURE_STORAGE_ACCOUNT_2, _3 ...) "+dflt)
	fs.StringVar(&s.data, "data", "", "keep the run in embedded storage in this directory (implies -storage embedded), so that a later inspect, enumerate or worker with the same -data can read or continue it; one process at a time")
}

// validate settles the backend: -data implies embedded. needData says
// that the command is useless on a temporary directory (it reads or
// serves a run that another process must find later).
func (s *storageFlags) validate(needData bool) error {
	switch {
	case s.kind == "" && s.data != "":
		s.kind = "embedded"
	case s.kind == "":
		s.kind = s.def
	}
	switch {
	case s.kind == "sim" && s.simOK:
		return s.validateSim()
	case s.kind != "embedded" && s.kind != "azure" && s.simOK:
		return usagef("-storage %q: must be embedded, azure or sim", s.kind)
	case s.kind != "embedded" && s.kind != "azure":
		return usagef("-storage %q: must be embedded or azure", s.kind)
	case s.data != "" && s.kind != "embedded":
		return usagef("-data keeps the run in embedded storage in a directory; leave out -storage azure")
	}
	for _, name := range []string{"sim-latency", "sim-bandwidth"} {
		if given(s.fs, name) {
			return usagef("-%s configures the simulated account of -storage sim; add -storage sim or leave -%s out", name, name)
		}
	}
	if needData && s.kind == "embedded" && s.data == "" {
		return usagef("-storage embedded needs -data DIR, the directory an enumerate -data DIR keeps its run in")
	}
	return nil
}

// open returns a metered backend. With run set, the command reads that
// existing run: a -data directory that does not exist is not made, and
// the error names what to do.
func (s *storageFlags) open(ctx context.Context, env Env, run string) (*storage.Metered, error) {
	switch s.kind {
	case "embedded":
		// A run without -data spills to a temporary directory, so memory
		// stays bounded however far it goes.
		cfg := embedded.Config{Dir: s.data, Persist: s.data != "", SpillToDisk: true}
		if cfg.Persist {
			var err error
			if run == "" {
				err = os.MkdirAll(s.data, 0o755)
			} else if _, err = os.Stat(s.data); errors.Is(err, fs.ErrNotExist) {
				return nil, s.noRun(run)
			}
			if err != nil {
				return nil, fmt.Errorf("opening embedded storage: %w", err)
			}
		}
		be, err := embedded.Open(cfg)
		if err != nil {
			return nil, fmt.Errorf("opening embedded storage: %w", err)
		}
		return s.meterOne(be), nil
	case "sim":
		be, err := sim.Open(s.sim)
		if err != nil {
			return nil, fmt.Errorf("opening the simulated account: %w", err)
		}
		s.simBE = be
		return s.meterOne(be), nil
	default:
		be, n, err := openAzure(ctx, env)
		if err != nil {
			return nil, err
		}
		s.accounts = n
		return be, nil
	}
}

// meterOne meters the one account of an in-process backend, whose
// disk may fill (see stopWhenFull).
func (s *storageFlags) meterOne(be storage.Backend) *storage.Metered {
	s.accounts = 1
	if s.full == nil {
		return storage.NewMetered(be)
	}
	return storage.NewMetered(storage.Wrap(be, s.watchSpace))
}

// stopWhenFull returns ctx cancelled by the first storage call that the
// backend opened afterwards refuses for lack of disk space: retrying
// would only fail again (and poison the messages), so the command stops
// and names the directory and the space needed. full returns the
// backend's description of the full disk (without the call that met it)
// once ctx is done, nil if something else ended it.
func (s *storageFlags) stopWhenFull(ctx context.Context) (_ context.Context, full func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.full = cancel
	return ctx, func() error {
		var full *embedded.NoSpaceError
		if errors.As(context.Cause(ctx), &full) {
			return full
		}
		return nil
	}
}

// watchSpace is the middleware that reports full disks to s.full.
func (s *storageFlags) watchSpace(c *storage.Call, next func() error) error {
	err := next()
	if errors.Is(err, embedded.ErrNoSpace) {
		s.full(err)
	}
	return err
}

// openRun opens an existing run, saying what to do when there is none.
func (s *storageFlags) openRun(ctx context.Context, env Env, run string) (*storage.Metered, *pipeline.Run, error) {
	be, err := s.open(ctx, env, run)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.findRun(ctx, be, run)
	if err != nil {
		be.Close()
		return nil, nil, err
	}
	return be, r, nil
}

// findRun opens an existing run on an open backend.
func (s *storageFlags) findRun(ctx context.Context, be storage.Backend, run string) (*pipeline.Run, error) {
	r, err := pipeline.OpenRun(ctx, be, run)
	if errors.Is(err, pipeline.ErrNoRun) {
		return nil, s.noRun(run)
	}
	if err != nil {
		return nil, err
	}
	return r, s.sameAccounts(r.Config)
}

// sameAccounts refuses a run spread over another number of storage
// accounts than this process opened: it would look for blobs on the
// wrong accounts.
func (s *storageFlags) sameAccounts(c pipeline.RunConfig) error {
	if c.Accounts == s.accounts {
		return nil
	}
	return fmt.Errorf("run %s is spread over %d storage accounts, but this process has %d (%s, then %s_2 and so on); give every process of a run the same accounts in the same order",
		c.Name, c.Accounts, s.accounts, azure.EnvConnectionString, azure.EnvConnectionString)
}

// noRun names what to do about a run that does not exist.
func (s *storageFlags) noRun(run string) error {
	if s.kind == "embedded" {
		return fmt.Errorf("no run %s in %s: start it with enumerate -data %s -run %s", run, s.data, shellQuote(s.data), run)
	}
	return fmt.Errorf("no run %s in the storage account: seed it with seed -run %s, or start it with enumerate -storage azure -run %s", run, run, run)
}

// where names the storage for messages about a run.
func (s *storageFlags) where() string {
	switch {
	case s.kind == "azure":
		return "in the storage account"
	case s.kind == "sim":
		return "in the simulated account, in memory"
	case s.data == "":
		return "in memory"
	}
	return "in " + s.data
}

// resume says how to continue an interrupted enumerate run, or that it
// cannot be.
func (s *storageFlags) resume(c pipeline.RunConfig) string {
	switch {
	case s.kind == "azure":
		return "resume with: enumerate -storage azure " + runFlags(c)
	case s.kind == "sim":
		return "a -storage sim run is kept in memory and cannot be resumed; run it again from the start"
	case s.data == "":
		return "the run was kept in memory and cannot be resumed (give -data DIR to keep a run)"
	}
	return "resume with: enumerate -data " + shellQuote(s.data) + " " + runFlags(c)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// logFlags configures log/slog.
type logFlags struct {
	format string
	level  string
}

func (l *logFlags) register(fs *flag.FlagSet, def string) {
	fs.StringVar(&l.format, "log-format", def, "log format: json or text")
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn or error")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.level)); err != nil {
		return nil, usagef("-log-level %q: must be debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch l.format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, usagef("-log-format %q: must be json or text", l.format)
}

// interruptedError is a run stopped by SIGINT or SIGTERM: one line, exit
// code 130.
type interruptedError struct{ msg string }

func (e interruptedError) Error() string { return e.msg }

// interruptible returns a context, derived from parent, that the first
// SIGINT or SIGTERM cancels, so the command stops taking work and shuts
// down cleanly. A second signal prints "name: " and again on one line and
// exits at once with ExitInterrupted (where env.Exit is set); the
// embedded backend survives that as it survives a kill. stop releases the
// signals.
func interruptible(parent context.Context, env Env, name, again string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sig:
			if env.Exit != nil {
				fmt.Fprintf(env.Stderr, "\n%s: %s\n", name, oneLine(again))
				env.Exit(ExitInterrupted)
			}
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// stoppable is interruptible for a command that finishes the work in
// hand when told to stop: the first signal cancels ctx, so that it
// takes no more, and hard, under which the work in hand runs, within
// later; a second signal still exits at once. stop releases the signals
// and cancels both (a timer already started fires later, into a context
// already cancelled).
func stoppable(parent context.Context, env Env, name, again string, within time.Duration) (ctx, hard context.Context, stop func()) {
	ctx, stopSignals := interruptible(parent, env, name, again)
	hard, abandon := context.WithCancel(parent)
	stopAfter := context.AfterFunc(ctx, func() { time.AfterFunc(within, abandon) })
	return ctx, hard, func() {
		stopAfter()
		stopSignals()
		abandon()
	}
}

// positive refuses the named numeric flags when given as zero or less:
// their zero value would otherwise quietly mean a default.
func positive(fs *flag.FlagSet, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil || !slices.Contains(names, f.Name) {
			return
		}
		bad := false
		switch v := f.Value.(flag.Getter).Get().(type) {
		case int:
			bad = v <= 0
		case int64:
			bad = v <= 0
		case time.Duration:
			bad = v <= 0
		}
		if bad {
			err = usagef("-%s %s: must be more than zero", f.Name, f.Value)
		}
	})
	return err
}

// given reports whether the named flag was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// simGC is for a process that rehearses a fleet on a simulated account
// (-storage sim) whose store may use storeBytes. Its hundreds of loops
// handle small tasks: its heap is many small objects with pointers and
// hundreds of goroutine stacks, which every collection scans, and at
// pipeline.WorkerGC's 25 percent the collector took a third of a
// rehearsal's CPU (docs/performance.md). Go's default of 100 collects a
// quarter as often. The limit leaves the loops pipeline.WorkerGC's limit
// beside what the account's store may hold, which stands for Azure's
// machines, not for the workers'.
func simGC(storeBytes int64) pipeline.GCSettings {
	return pipeline.GCSettings{Percent: 100, MemoryLimit: pipeline.WorkerGC.MemoryLimit + storeBytes}
}

// tuneGC applies g where the environment sets no GOGC or GOMEMLIMIT.
func tuneGC(env Env, g pipeline.GCSettings) {
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(g.Percent)
	}
	if env.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(g.MemoryLimit)
	}
}

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
	"log/slog"
	"os"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// Env is what a command gets from its process.
type Env struct {
	Args   []string // without the program name
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// OSEnv is the real process environment; only cmd/ mains call it.
func OSEnv() Env {
	return Env{Args: os.Args[1:], Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1 // the work failed or a check found a problem
	ExitUsage = 2 // bad flags
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
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, oneLine(err.Error()))
	return ExitFail
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ") }

// storageFlags selects and configures the backend.
type storageFlags struct {
	kind string
	data string
}

func (s *storageFlags) register(fs *flag.FlagSet, def string) {
	fs.StringVar(&s.kind, "storage", def, "storage backend: embedded (in this process, no setup) or azure (AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with DefaultAzureCredential; Azurite works too)")
	fs.StringVar(&s.data, "data", "", "with -storage embedded: keep the storage in this directory (made if missing), so that a later inspect, enumerate or worker with the same -data can read or continue the run; one process at a time (default: a temporary directory, removed at exit)")
}

func (s *storageFlags) validate() error {
	if s.kind != "embedded" && s.kind != "azure" {
		return usagef("-storage %q: must be embedded or azure", s.kind)
	}
	if s.data != "" && s.kind != "embedded" {
		return usagef("-data goes with -storage embedded")
	}
	return nil
}

// open returns a metered backend.
func (s *storageFlags) open(ctx context.Context, env Env) (*storage.Metered, error) {
	switch s.kind {
	case "embedded":
		cfg := embedded.Config{Dir: s.data, Persist: s.data != ""}
		if cfg.Persist {
			if err := os.MkdirAll(s.data, 0o755); err != nil {
				return nil, fmt.Errorf("opening embedded storage: %w", err)
			}
		}
		be, err := embedded.Open(cfg)
		if err != nil {
			return nil, fmt.Errorf("opening embedded storage: %w", err)
		}
		return storage.NewMetered(be), nil
	default:
		cfg, err := azure.ConfigFromEnv(env.Getenv)
		if err != nil {
			return nil, err
		}
		be, err := azure.Open(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("opening Azure storage: %w", err)
		}
		return storage.NewMetered(be), nil
	}
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

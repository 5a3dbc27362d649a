package cli

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
)

// TestRunFlagsStartTheRunAgain: the command line runFlags writes for a
// run (enumerate's "resume with" line) gives back the run's
// configuration, whatever settings it was started with, and leaves out
// the flags whose defaults it has.
func TestRunFlagsStartTheRunAgain(t *testing.T) {
	const start6 = "---------X----XX----XO-------------- O" // 6x6, after black's first move
	for _, tc := range []struct {
		args     []string
		want     string // runFlags
		leftOut  []string
		contains []string
	}{
		{args: nil, want: "-run name -board 8 -plies 9 -blob-positions 65536 -bucket-blobs 16 -grow-from 11 -merge-fan-in 1024"},
		{args: []string{"-board", "4", "-plies", "8", "-bucket-blobs", "4", "-grow-from", "0"},
			want: "-run name -board 4 -plies 8 -blob-positions 65536 -bucket-blobs 4 -grow-from 0 -merge-fan-in 1024"},
		{args: []string{"-board", "6", "-start", start6, "-plies", "5", "-solve", "-solve-mode", "root", "-queue-shards", "3", "-partition-shards", "2"},
			contains: []string{" -start '" + start6 + "' -solve -solve-positions ", " -solve-mode root -queue-shards 3 -partition-shards 2"}},
		{args: []string{"-plies", "10", "-solve", "-solve-positions", "7"}, contains: []string{" -solve -solve-positions 7"}, leftOut: []string{"-solve-mode", "-start", "-queue-shards"}},
	} {
		cfg, err := settingsConfig(tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		line := runFlags(cfg)
		if tc.want != "" && line != tc.want {
			t.Errorf("%q: runFlags %q, want %q", tc.args, line, tc.want)
		}
		for _, s := range tc.contains {
			if !strings.Contains(line, s) {
				t.Errorf("%q: runFlags %q, want %q in it", tc.args, line, s)
			}
		}
		for _, s := range tc.leftOut {
			if strings.Contains(line, s+" ") {
				t.Errorf("%q: runFlags %q gives %s", tc.args, line, s)
			}
		}
		words := shellWords(t, line)
		if words[0] != "-run" || words[1] != "name" {
			t.Fatalf("runFlags %q does not start with -run name", line)
		}
		again, err := settingsConfig(words[2:])
		if err != nil {
			t.Fatalf("runFlags %q: %v", line, err)
		}
		if !reflect.DeepEqual(again, cfg) {
			t.Errorf("%q: runFlags %q gives\n%+v, want\n%+v", tc.args, line, again, cfg)
		}
	}
}

// settingsConfig is the configuration of run "name" that args give
// settingsFlags.
func settingsConfig(args []string) (cfg pipeline.RunConfig, err error) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f settingsFlags
	f.register(fs, "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return f.config(fs, "name")
}

// shellWords splits a command line as a POSIX shell does the words that
// shellQuote writes: plain words and single-quoted ones.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
			}
			inWord = false
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("%q: an unclosed quote", line)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// TestWorkerThrottleFlags: worker's -throttle-retries and -throttle-delay
// become the worker loops' throttle settings, 0 retries none at all
// (where the configuration's zero would be its default).
func TestWorkerThrottleFlags(t *testing.T) {
	d := pipeline.DefaultWorkerConfig()
	for _, tc := range []struct {
		args    []string
		retries int
		delay   time.Duration
	}{
		{nil, d.ThrottleRetries, d.ThrottleDelay},
		{[]string{"-throttle-retries", "0"}, pipeline.NoThrottleRetries, d.ThrottleDelay},
		{[]string{"-throttle-retries", "3", "-throttle-delay", "250ms"}, 3, 250 * time.Millisecond},
		{[]string{"-throttle-retries", "20", "-throttle-delay", "1m"}, 20, time.Minute},
	} {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f workerFlags
		f.register(fs)
		if err := fs.Parse(append([]string{"-run", "abc", "-storage", "embedded", "-data", t.TempDir()}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.workerConfig(fs)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if cfg.ThrottleRetries != tc.retries || cfg.ThrottleDelay != tc.delay {
			t.Errorf("%q: %d retries after %v, want %d after %v", tc.args, cfg.ThrottleRetries, cfg.ThrottleDelay, tc.retries, tc.delay)
		}
	}
}

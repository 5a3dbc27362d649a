package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runCmd(t *testing.T, cmd func(Env) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmd(Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestBadFlagsGiveOneLineAndExit2(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		cmd  func(Env) int
		args []string
		want string
	}{
		{"board", Enumerate, []string{"-board", "5"}, "-board 5"},
		{"plies", Enumerate, []string{"-board", "4", "-plies", "13"}, "ends at ply 12"},
		{"engine", Enumerate, []string{"-engine", "magic"}, "-engine"},
		{"unknown flag", Enumerate, []string{"-bogus"}, "bogus"},
		{"not a number", Enumerate, []string{"-board", "x"}, "-board"},
		{"workers", Enumerate, []string{"-workers", "0"}, "-workers"},
		{"storage", Enumerate, []string{"-storage", "s3"}, `-storage "s3": must be embedded, azure or sim`},
		{"run name", Enumerate, []string{"-run", "Bad_Name"}, "run name"},
		{"argument", Enumerate, []string{"extra"}, "unexpected argument"},
		{"seed needs run", Seed, nil, "-run is required"},
		{"delete with settings", Seed, []string{"-run", "demo", "-delete", "-plies", "3"}, "-delete takes -run, -force and the storage flags; leave out -plies"},
		{"force without delete", Seed, []string{"-run", "demo", "-force"}, "-force is for -delete"},
		{"seed run name", Seed, []string{"-run", "x"}, "run name"},
		{"worker needs run", Worker, nil, "-run is required"},
		{"worker concurrency", Worker, []string{"-run", "abc", "-concurrency", "0"}, "-concurrency"},
		{"worker visibility", Worker, []string{"-run", "abc", "-visibility", "10ms"}, "visibility"},
		{"inspect needs run", Inspect, nil, "-run is required"},
		{"inspect -http port", Inspect, []string{"-run", "abc", "-http", "8080"}, `-http "8080": want :PORT or HOST:PORT`},
		{"inspect -http name", Inspect, []string{"-run", "abc", "-http", ":http"}, `-http ":http"`},
		{"inspect -http -check", Inspect, []string{"-run", "abc", "-http", ":0", "-check"}, "leave out -check, -position, -moves and -json"},
		{"inspect -http -moves", Inspect, []string{"-run", "abc", "-http", ":0", "-moves", "f5"}, "leave out -check"},
		{"inspect -http -json", Inspect, []string{"-run", "abc", "-http", ":0", "-json", "x.json"}, "leave out -check"},
		{"start squares", Enumerate, []string{"-start", "XO- X"}, "-start: solve: bad position line: 3 squares"},
		{"start side", Enumerate, []string{"-start", "----------------"}, "-start: "},
		{"start board", Enumerate, []string{"-board", "8", "-start", "-----XO--OX----- X"}, "-start has 16 squares, a 4x4 board, but -board is 8"},
		{"start plies", Enumerate, []string{"-start", "XXXXXXXXXXXXXX-- X", "-plies", "3"}, "ends at ply 2"},
		{"start reference", Enumerate, []string{"-engine", "reference", "-solve"}, "-start and -solve need the pipeline"},
		{"solve positions without solve", Enumerate, []string{"-board", "4", "-solve-positions", "8"}, "give -solve too"},
		{"solve positions 0", Enumerate, []string{"-board", "4", "-solve", "-solve-positions", "0"}, "-solve-positions 0"},
		{"solve positions above blob positions", Enumerate, []string{"-board", "4", "-solve", "-blob-positions", "10", "-solve-positions", "11"}, "-solve-positions 11: must be 1 to the blob positions, 10"},
		{"queue shards 0", Enumerate, []string{"-queue-shards", "0"}, "-queue-shards 0: must be 1 to 64"},
		{"partition shards 0", Enumerate, []string{"-partition-shards", "0"}, "-partition-shards 0: must be 1 to 64"},
		{"seed queue shards 65", Seed, []string{"-run", "abc", "-queue-shards", "65"}, "-queue-shards 65: must be 1 to 64"},
		{"seed solve positions without solve", Seed, []string{"-run", "abc", "-solve-positions", "8"}, "give -solve too"},
		{"start verify", Enumerate, []string{"-verify", "-start", "-----XO--OX----- X"}, "-verify compares"},
		{"seed start", Seed, []string{"-run", "abc", "-start", "XO"}, "-start: "},
		{"enumerate -http", Enumerate, []string{"-http", "x"}, `-http "x"`},
		{"enumerate -http reference", Enumerate, []string{"-http", ":0", "-engine", "reference"}, "-http serves the pipeline's stored run"},
		{"bench board 0", Bench, []string{"-board", "0"}, "-board 0"},
		{"bench processes 0", Bench, []string{"-processes", "0"}, "-processes 0"},
		{"bench timeout", Bench, []string{"-timeout", "-1s"}, "-timeout -1s"},
		{"negative plies", Enumerate, []string{"-plies", "-3"}, "-plies -3: must be 0 to 60"},
		{"plies -1 given", Enumerate, []string{"-plies", "-1"}, "-plies -1"},
		{"blob positions 0", Enumerate, []string{"-blob-positions", "0"}, "-blob-positions 0: must be 1 to 4194304"},
		{"bucket-blobs 0", Enumerate, []string{"-bucket-blobs", "0"}, "-bucket-blobs 0: must be 1 to 1024"},
		{"bucket-blobs 1025", Enumerate, []string{"-bucket-blobs", "1025"}, "-bucket-blobs 1025: must be 1 to 1024"},
		{"grow-from -1", Enumerate, []string{"-grow-from", "-1"}, "-grow-from -1: must be 1 to 99, or 0 for never"},
		{"merge-fan-in 1", Enumerate, []string{"-merge-fan-in", "1"}, "-merge-fan-in 1: must be 2 to 4096, or 0 for no limit"},
		{"negative workers", Enumerate, []string{"-workers", "-2"}, "-workers -2"},
		{"visibility 0", Enumerate, []string{"-visibility", "0s"}, "-visibility 0s"},
		{"board 0", Enumerate, []string{"-board", "0"}, "-board 0"},
		{"enumerate -data azure", Enumerate, []string{"-data", "d", "-storage", "azure"}, "leave out -storage azure"},
		{"enumerate -data sim", Enumerate, []string{"-data", "d", "-storage", "sim"}, "leave out -storage sim"},
		{"sim latency 0", Enumerate, []string{"-storage", "sim", "-sim-latency", "0s"}, "-sim-latency 0s: must be positive"},
		{"sim latency negative", Enumerate, []string{"-storage", "sim", "-sim-latency", "-1ms"}, "-sim-latency -1ms: must be positive"},
		{"sim latency an hour", Enumerate, []string{"-storage", "sim", "-sim-latency", "1h"}, "-sim-latency 1h0m0s: must be at most a minute"},
		{"sim bandwidth 0", Enumerate, []string{"-storage", "sim", "-sim-bandwidth", "0"}, "-sim-bandwidth 0: must be a positive number"},
		{"sim bandwidth NaN", Enumerate, []string{"-storage", "sim", "-sim-bandwidth", "NaN"}, "-sim-bandwidth NaN"},
		{"sim latency without sim", Enumerate, []string{"-sim-latency", "5ms"}, "-sim-latency configures the simulated account of -storage sim"},
		{"sim bandwidth with azure", Enumerate, []string{"-storage", "azure", "-sim-bandwidth", "5"}, "add -storage sim"},
		{"worker sim", Worker, []string{"-run", "abc", "-storage", "sim"}, `-storage "sim": must be embedded or azure`},
		{"inspect sim", Inspect, []string{"-run", "abc", "-storage", "sim"}, `-storage "sim": must be embedded or azure`},
		{"seed negative plies", Seed, []string{"-run", "abc", "-plies", "-3"}, "-plies -3"},
		{"seed board 0", Seed, []string{"-run", "abc", "-board", "0"}, "-board 0"},
		{"seed blob positions 0", Seed, []string{"-run", "abc", "-blob-positions", "0"}, "-blob-positions 0"},
		{"seed bucket-blobs 0", Seed, []string{"-run", "abc", "-bucket-blobs", "0"}, "-bucket-blobs 0"},
		{"seed -data azure", Seed, []string{"-run", "abc", "-data", "d", "-storage", "azure"}, "leave out -storage azure"},
		{"seed embedded without -data", Seed, []string{"-run", "abc", "-storage", "embedded"}, "needs -data DIR"},
		{"worker max dequeue 0", Worker, []string{"-run", "abc", "-max-dequeue", "0"}, "-max-dequeue 0"},
		{"worker throttle retries -1", Worker, []string{"-run", "abc", "-throttle-retries", "-1"}, "-throttle-retries -1: must be 0 to 20"},
		{"worker throttle retries 21", Worker, []string{"-run", "abc", "-throttle-retries", "21"}, "-throttle-retries 21: must be 0 to 20"},
		{"worker throttle delay 0", Worker, []string{"-run", "abc", "-throttle-delay", "0s"}, "-throttle-delay 0s: must be more than zero"},
		{"worker throttle delay 2m", Worker, []string{"-run", "abc", "-throttle-delay", "2m"}, "-throttle-delay 2m0s: must be at most 1m0s"},
		{"worker visibility 0", Worker, []string{"-run", "abc", "-visibility", "0s"}, "-visibility 0s"},
		{"worker finish within", Worker, []string{"-run", "abc", "-finish-within", "-1s"}, "-finish-within -1s: must be zero or more"},
		{"worker -data azure", Worker, []string{"-run", "abc", "-data", "d", "-storage", "azure"}, "leave out -storage azure"},
		{"worker embedded without -data", Worker, []string{"-run", "abc", "-storage", "embedded"}, "needs -data DIR"},
		{"inspect -data azure", Inspect, []string{"-run", "abc", "-data", "d", "-storage", "azure"}, "leave out -storage azure"},
		{"inspect embedded without -data", Inspect, []string{"-run", "abc", "-storage", "embedded"}, "needs -data DIR"},
		// Files written at the end of a run are checked before it starts.
		{"json in a missing directory", Enumerate, []string{"-board", "4", "-plies", "2", "-json", filepath.Join(missing, "r.json")}, "-json " + filepath.Join(missing, "r.json") + ": cannot write in " + missing},
		{"json a directory", Enumerate, []string{"-board", "4", "-plies", "2", "-json", dir}, "is a directory"},
		{"plan json in a missing directory", Enumerate, []string{"-plan", "-json", filepath.Join(missing, "p.json")}, "cannot write in"},
		{"memprofile in a missing directory", Enumerate, []string{"-board", "4", "-plies", "2", "-memprofile", filepath.Join(missing, "m.prof")}, "-memprofile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.cmd, tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line mentioning %q", stderr, tc.want)
			}
		})
	}
}

func TestHelpExplains(t *testing.T) {
	for name, cmd := range map[string]func(Env) int{"enumerate": Enumerate, "seed": Seed, "worker": Worker, "inspect": Inspect} {
		code, out, _ := runCmd(t, cmd, "-h")
		if code != 0 || !strings.Contains(out, "Usage:") || !strings.Contains(out, "-run") && name != "enumerate" || !strings.Contains(out, "Flags:") {
			t.Errorf("%s -h: exit %d, output %q", name, code, out)
		}
	}
}

func TestAzureWithoutConfigurationIsOneLine(t *testing.T) {
	code, _, stderr := runCmd(t, Inspect, "-run", "abc")
	if code != ExitFail || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line", code, stderr)
	}
}

func TestEnumerateEnginesAgreeAndWriteJSON(t *testing.T) {
	dir := t.TempDir()
	for _, engine := range []string{"reference", "pipeline"} {
		path := filepath.Join(dir, engine+".json")
		code, out, stderr := runCmd(t, Enumerate, "-engine", engine, "-board", "4", "-json", path, "-quiet", "-verify", "-workers", "2")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", engine, code, stderr)
		}
		if !strings.Contains(out, "root: white") {
			t.Errorf("%s output lacks the root: %s", engine, out)
		}
		rep := readReport(t, path)
		if rep.Board != 4 || rep.TargetPly != 12 || !rep.Complete || rep.Root != "white" || len(rep.Plies) != 13 || rep.Plies[12].Positions != 999 {
			t.Errorf("%s report: %+v", engine, rep)
		}
		if engine == "pipeline" && rep.StorageTransactions <= 0 {
			t.Errorf("pipeline report has no storage transactions")
		}
	}
}

// TestEmbeddedRunContinues starts a run with -data, reads it with inspect
// given only -data (which implies embedded storage), and runs enumerate
// again: without its flags it takes the run's, with a flag that would
// change the run it is refused in one line. A run that does not exist
// is named with what to do.
func TestEmbeddedRunContinues(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	first := filepath.Join(t.TempDir(), "first.json")
	if code, _, stderr := runCmd(t, Enumerate, "-data", dir, "-run", "four", "-board", "4", "-plies", "8", "-bucket-blobs", "4", "-quiet", "-json", first); code != 0 {
		t.Fatalf("enumerate: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		name string
		cmd  func(Env) int
		args []string
		code int
		want string // in the one line on stderr
	}{
		{"inspect", Inspect, []string{"-data", dir, "-run", "four"}, 0, ""},
		{"inspect -check", Inspect, []string{"-data", dir, "-run", "four", "-check"}, 0, ""},
		{"no such run", Inspect, []string{"-data", dir, "-run", "five"}, ExitFail, "no run five in " + dir + ": start it with enumerate -data " + dir + " -run five"},
		{"no such directory", Inspect, []string{"-data", dir + "x", "-run", "four"}, ExitFail, "start it with enumerate -data " + dir + "x -run four"},
		{"worker on no run", Worker, []string{"-data", dir, "-run", "five"}, ExitFail, "start it with enumerate -data"},
		{"changed target", Enumerate, []string{"-data", dir, "-run", "four", "-board", "4", "-plies", "9"}, ExitUsage,
			"-plies 9 would change run four in " + dir + ", started with -run four -board 4 -plies 8 -blob-positions 65536 -bucket-blobs 4"},
		{"changed board", Enumerate, []string{"-data", dir, "-run", "four", "-board", "6"}, ExitUsage, "-board 6 would change run four"},
		{"changed bucket blobs", Enumerate, []string{"-data", dir, "-run", "four", "-board", "4", "-plies", "8", "-bucket-blobs", "8"}, ExitUsage, "-bucket-blobs 8 would change run four"},
		{"solve added", Enumerate, []string{"-data", dir, "-run", "four", "-board", "4", "-plies", "8", "-bucket-blobs", "4", "-solve", "-solve-mode", "wld"}, ExitUsage,
			"-solve would change run four in " + dir + ", started with -run four -board 4 -plies 8 -blob-positions 65536 -bucket-blobs 4 -grow-from 11 -merge-fan-in 1024; leave -solve out"},
		{"changed start", Enumerate, []string{"-data", dir, "-run", "four", "-start", "-----OX--XX---X- O"}, ExitUsage,
			"-start '-----OX--XX---X- O' would change run four"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.cmd, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if tc.want != "" && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want)) {
				t.Errorf("stderr %q: want one line with %q", stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(dir + "x"); err == nil {
		t.Errorf("inspect made the directory it was asked to read")
	}
	again := filepath.Join(t.TempDir(), "again.json")
	if code, _, stderr := runCmd(t, Enumerate, "-data", dir, "-run", "four", "-quiet", "-json", again); code != 0 {
		t.Fatalf("enumerate again: exit %d: %s", code, stderr)
	}
	want, got := readReport(t, first), readReport(t, again)
	if diff := Compare(&want, &got); diff != "" || got.Board != 4 || got.TargetPly != 8 || !got.Complete {
		t.Errorf("the run again: board %d, target %d, complete %v; %s", got.Board, got.TargetPly, got.Complete, diff)
	}
}

// TestSecondInterruptExitsAtOnce signals this process twice: the first
// SIGINT cancels the context, the second prints one line and exits with
// status 130 without waiting for anything.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	var errb bytes.Buffer
	exited := make(chan int, 1)
	env := Env{Stderr: &errb, Exit: func(code int) { exited <- code }}
	ctx, stop := interruptible(context.Background(), env, "enumerate", "interrupted again: exiting at once")
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	select {
	case code := <-exited:
		t.Fatalf("exit %d after the first signal", code)
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-exited; code != ExitInterrupted || errb.String() != "\nenumerate: interrupted again: exiting at once\n" {
		t.Errorf("exit %d, stderr %q; want %d and one line", code, errb.String(), ExitInterrupted)
	}
}

// TestStopFinishesWithin signals this process once for each setting of
// -finish-within: the first signal stops the taking of work (ctx) at
// once, and the work in hand (hard) only within later: with an hour,
// not before stop; with zero, at once.
func TestStopFinishesWithin(t *testing.T) {
	for _, within := range []time.Duration{time.Hour, 0} {
		env := Env{Stderr: io.Discard, Exit: func(code int) { t.Errorf("exit %d after one signal", code) }}
		ctx, hard, stop := stoppable(context.Background(), env, "worker", "again", within)
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		if within == 0 {
			<-hard.Done()
		} else if hard.Err() != nil {
			t.Errorf("-finish-within %v: the work in hand was abandoned with the first signal", within)
		}
		stop()
		if hard.Err() == nil {
			t.Errorf("-finish-within %v: stop left the work in hand running", within)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"./four":          "./four",
		"/tmp/run-1.x":    "/tmp/run-1.x",
		"my runs":         "'my runs'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"$HOME/x":         "'$HOME/x'",
		"a;rm -rf b":      "'a;rm -rf b'",
		"C:/data,old@v2%": "C:/data,old@v2%",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

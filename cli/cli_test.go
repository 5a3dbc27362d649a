package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, cmd func(Env) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmd(Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestBadFlagsGiveOneLineAndExit2(t *testing.T) {
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
		{"storage", Enumerate, []string{"-storage", "s3"}, "-storage"},
		{"run name", Enumerate, []string{"-run", "Bad_Name"}, "run name"},
		{"argument", Enumerate, []string{"extra"}, "unexpected argument"},
		{"seed needs run", Seed, nil, "-run is required"},
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
		{"start verify", Enumerate, []string{"-verify", "-start", "-----XO--OX----- X"}, "-verify compares"},
		{"seed start", Seed, []string{"-run", "abc", "-start", "XO"}, "-start: "},
		{"enumerate -http", Enumerate, []string{"-http", "x"}, `-http "x"`},
		{"enumerate -http reference", Enumerate, []string{"-http", ":0", "-engine", "reference"}, "-http serves the pipeline's stored run"},
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

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/report"
)

// section returns the code blocks between a page's markers
// <!-- NAME:begin ... --> and <!-- NAME:end -->: the lines of sh blocks,
// and the text blocks (shown output), each as its lines.
func section(t *testing.T, readme, name string) (commands []string, shown [][]string) {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- "+name+":begin")
	body, _, ok2 := strings.Cut(rest, "<!-- "+name+":end -->")
	if !ok || !ok2 {
		t.Fatalf("no <!-- %s:begin ... --> ... <!-- %s:end --> section", name, name)
	}
	var block []string
	lang := ""
	in := false
	for _, line := range strings.Split(body, "\n") {
		if fence, ok := strings.CutPrefix(line, "```"); ok {
			if !in {
				in, lang, block = true, fence, nil
				continue
			}
			in = false
			switch lang {
			case "sh":
				commands = append(commands, block...)
			case "text":
				shown = append(shown, block)
			default:
				t.Fatalf("README.md %s: a code block of language %q; the test knows sh and text", name, lang)
			}
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	return commands, shown
}

func readme(t *testing.T) (root, text string) {
	t.Helper()
	root = repoRoot(t)
	return root, readDoc(t, root, "README.md")
}

var (
	row    = regexp.MustCompile(`^\s*(\d+)((?:\s+\d+){7})\s*$`)
	footer = regexp.MustCompile(`(?m)^board (\d+)x\d+, target ply (\d+), (complete|incomplete), root: (\w+)`)
)

// parseTable reads enumerate's printed report: the per-ply rows (ply,
// positions, terminal, edges, black, white, draw, unknown) and the summary
// line. Other lines, such as the cost report, are ignored.
func parseTable(t *testing.T, lines []string) *report.Report {
	t.Helper()
	rep := &report.Report{}
	for _, l := range lines {
		if f := footer.FindStringSubmatch(l); f != nil {
			rep.Board, _ = strconv.Atoi(f[1])
			rep.TargetPly, _ = strconv.Atoi(f[2])
			rep.Complete, rep.Root = f[3] == "complete", f[4]
			continue
		}
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var n [8]int64
		for i, f := range strings.Fields(m[1] + m[2]) {
			n[i], _ = strconv.ParseInt(f, 10, 64)
		}
		rep.Plies = append(rep.Plies, report.Ply{Ply: int(n[0]), Positions: n[1], Terminal: n[2], Edges: n[3],
			BlackWins: n[4], WhiteWins: n[5], Draws: n[6], Unknown: n[7]})
	}
	return rep
}

// checkReference compares a complete run's report with docs/reference.md.
func checkReference(t *testing.T, rep *report.Report) {
	t.Helper()
	if !rep.Complete {
		t.Error("run incomplete")
	}
	if len(rep.Plies) != rep.TargetPly+1 {
		t.Fatalf("%d ply rows, want %d (plies 0..%d)", len(rep.Plies), rep.TargetPly+1, rep.TargetPly)
	}
	checked := 0
	for i, p := range rep.Plies {
		if p.Ply != i {
			t.Fatalf("row %d is ply %d", i, p.Ply)
		}
		switch {
		case rep.Board == 8 && i < len(testkit.Ref8x8Positions):
			if p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i] || p.Terminal != 0 {
				t.Errorf("8x8 ply %d: %+v; docs/reference.md: %d positions, %d edges, none terminal", i, p, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
			}
			if i == 8 && rep.TargetPly >= 9 && (p.BlackWins != 43 || p.WhiteWins != 0 || p.Draws != 0) {
				t.Errorf("8x8 ply 8 through ply %d: black/white/draw %d/%d/%d; docs/reference.md: 43/0/0", rep.TargetPly, p.BlackWins, p.WhiteWins, p.Draws)
			}
			checked++
		case rep.Board == 4 && i < len(testkit.Ref4x4):
			// Results are final only when the whole game is enumerated.
			got, want := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}, testkit.Ref4x4[i]
			if rep.TargetPly < len(testkit.Ref4x4)-1 {
				got[3], got[4], got[5], want[3], want[4], want[5] = 0, 0, 0, 0, 0, 0
			}
			if got != want {
				t.Errorf("4x4 ply %d: %v; docs/reference.md: %v", i, got, want)
			}
			checked++
		}
	}
	if rep.Board == 4 && rep.TargetPly == len(testkit.Ref4x4)-1 && rep.Root != "white" {
		t.Errorf("4x4 root %s; docs/reference.md: a white win", rep.Root)
	}
	if checked == 0 {
		t.Errorf("board %d: no ply checked against docs/reference.md", rep.Board)
	}
}

// TestReadmeQuickstart runs every go run command of README.md's quickstart
// exactly as written, from the repository root, and checks what it prints
// against docs/reference.md and against the output the README shows.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	root, text := readme(t)
	commands, shown := section(t, text, "quickstart")
	var runs []string
	for _, c := range commands {
		switch line := strings.TrimSpace(c); {
		case line == "":
		case strings.HasPrefix(line, "go run ./cmd/enumerate"):
			runs = append(runs, line)
		case strings.HasPrefix(line, "make test"):
			// The whole suite, of which this test is a part: not run from here.
		default:
			t.Errorf("README.md quickstart: %q: the test runs go run ./cmd/enumerate lines and knows make test, nothing else", line)
		}
	}
	if len(runs) == 0 {
		t.Fatal("README.md quickstart: no go run ./cmd/enumerate line")
	}
	var first *report.Report
	for i, line := range runs {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			// bash -c: the line as a user pastes it, comment included.
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir = root
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, out.String(), errb.String())
			}
			rep := parseTable(t, strings.Split(out.String(), "\n"))
			checkReference(t, rep)
			if i == 0 {
				first = rep
			}
		})
	}
	// The output the README shows is what the first command prints.
	if len(shown) > 0 && first != nil {
		want := parseTable(t, shown[0]).Plies
		if len(want) != len(first.Plies) {
			t.Errorf("README.md shows %d ply rows for %q; it printed %d", len(want), runs[0], len(first.Plies))
		}
		for i := range min(len(want), len(first.Plies)) {
			if !reflect.DeepEqual(want[i], first.Plies[i]) {
				t.Errorf("README.md shows %+v for %q; it printed %+v", want[i], runs[0], first.Plies[i])
			}
		}
	}
}

// TestReadmeAzuriteExample runs docs/azure.md's rehearsal on Azurite (the
// README points to it) as one bash script from the repository root,
// exactly as written but for set -e in front, with an Azurite of its own
// (make azurite-start keeps its state in AZURITE_STATE_DIR), and checks
// the demo.json it writes.
func TestReadmeAzuriteExample(t *testing.T) {
	azurite(t) // Azurite is installed, so make azurite-start needs no download
	root, _ := readme(t)
	commands, _ := section(t, readDoc(t, root, "docs/azure.md"), "azurite-example")
	script := strings.Join(commands, "\n")
	if !strings.Contains(script, "make -s azurite-start") || !strings.Contains(script, "make azurite-stop") {
		t.Fatalf("the example no longer starts and stops its Azurite with make:\n%s", script)
	}

	// The example writes demo.json in the repository root: keep a file of
	// that name that is already there, and remove the example's.
	out := filepath.Join(root, "demo.json")
	if _, err := os.Stat(out); err == nil {
		kept := out + ".kept-by-e2e"
		if err := os.Rename(out, kept); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Rename(kept, out) })
	}
	t.Cleanup(func() { os.Remove(out) })

	state := t.TempDir()
	env := []string{"AZURITE_STATE_DIR=" + state}
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "AZURITE_STATE_DIR", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
			// The example must get its connection string from its own Azurite.
		default:
			env = append(env, kv)
		}
	}
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(root, "scripts", "azurite.sh"), "stop")
		stop.Env = env
		stop.Run() // already stopped by the example unless it failed half-way
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -e\n"+script)
	cmd.Dir = root
	cmd.Env = env
	// The background workers are in the script's process group: a timeout
	// kills them too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, outb)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the example wrote no demo.json: %v\n%s", err, outb)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Run != "demo" || rep.Board != 8 || rep.TargetPly != 9 {
		t.Errorf("demo.json: run %q, board %d, target %d; the example seeds demo, 8x8, ply 9", rep.Run, rep.Board, rep.TargetPly)
	}
	checkReference(t, &rep)
	if rep.StorageTransactions <= 0 {
		t.Errorf("demo.json: %d storage transactions: the workers recorded none", rep.StorageTransactions)
	}
}

func TestParseTable(t *testing.T) {
	out := []string{
		"  ply  positions  terminal  edges  black  white  draw  unknown",
		"    0          1         0      0      0      1     0        0",
		"   12        999       999   2450    411    441   147        0",
		"board 4x4, target ply 12, complete, root: white, storage transactions: 743",
		"  7 1 2",
		"    backtrack    44     32    207    283",
	}
	want := &report.Report{Board: 4, TargetPly: 12, Complete: true, Root: "white", Plies: []report.Ply{
		{Ply: 0, Positions: 1, WhiteWins: 1},
		{Ply: 12, Positions: 999, Terminal: 999, Edges: 2450, BlackWins: 411, WhiteWins: 441, Draws: 147},
	}}
	if got := parseTable(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("parseTable = %+v, want %+v", got, want)
	}
}

// TestReadmeInspectExample runs the embedded-run inspection example as
// written, from the repository root, and checks that the last command
// prints exactly the output README shows.
func TestReadmeInspectExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	root, text := readme(t)
	commands, shown := section(t, text, "inspect-example")
	if len(commands) != 2 || len(shown) != 1 {
		t.Fatalf("README.md inspect-example: %d command lines and %d output blocks; want 2 and 1", len(commands), len(shown))
	}
	// The example keeps its run in ./four: never touch one already there.
	dir := filepath.Join(root, "four")
	if _, err := os.Stat(dir); err == nil {
		t.Skipf("%s exists; remove it to run this test", dir)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var out bytes.Buffer
	for _, line := range commands {
		out.Reset()
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = root
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, out.String(), errb.String())
		}
	}
	if want := strings.Join(shown[0], "\n"); !strings.Contains(out.String(), want) {
		t.Errorf("the last command printed:\n%s\nREADME shows:\n%s", out.String(), want)
	}
}

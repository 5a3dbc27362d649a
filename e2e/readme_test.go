package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// quickstart returns the code blocks between README.md's quickstart
// markers: the command lines of sh blocks, and the lines of text blocks
// (shown output).
func quickstart(t *testing.T, readme string) (commands []string, shown [][]string) {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- quickstart:begin")
	section, _, ok2 := strings.Cut(rest, "<!-- quickstart:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md: no <!-- quickstart:begin ... --> ... <!-- quickstart:end --> section")
	}
	var block []string
	lang := ""
	in := false
	for _, line := range strings.Split(section, "\n") {
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
				t.Fatalf("README.md quickstart: a code block of language %q; the test knows sh and text", lang)
			}
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	return commands, shown
}

var row = regexp.MustCompile(`^\s*(\d+)((?:\s+\d+){7})\s*$`)

// table reads the per-ply rows of enumerate's output: ply, positions,
// terminal, edges, black, white, draw, unknown. Other lines are ignored.
func table(lines []string) [][8]int64 {
	var rows [][8]int64
	for _, l := range lines {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var r [8]int64
		for i, f := range strings.Fields(m[1] + m[2]) {
			r[i], _ = strconv.ParseInt(f, 10, 64)
		}
		rows = append(rows, r)
	}
	return rows
}

// The published figures of REFERENCE.md.
var (
	// 8x8: canonical positions and edges per ply 0..8; through ply 9,
	// 43 positions of ply 8 are won for black and none for white.
	ref8Positions = []int64{1, 1, 3, 14, 60, 322, 1773, 10649, 67245}
	ref8Edges     = []int64{0, 4, 3, 14, 61, 340, 1893, 11906, 75557}
	// 4x4 to the end: ply, positions, terminal, edges, black, white, draw.
	ref4 = [][7]int64{
		{0, 1, 0, 0, 0, 1, 0}, {1, 1, 0, 4, 0, 1, 0}, {2, 3, 0, 3, 2, 1, 0},
		{3, 11, 0, 11, 5, 6, 0}, {4, 31, 0, 32, 19, 12, 0}, {5, 98, 0, 105, 38, 58, 2},
		{6, 274, 1, 292, 149, 114, 11}, {7, 666, 1, 810, 267, 350, 49},
		{8, 1544, 3, 1753, 788, 657, 99}, {9, 2665, 18, 3592, 1173, 1290, 202},
		{10, 3464, 50, 5025, 1624, 1557, 283}, {11, 2617, 167, 5059, 1113, 1209, 295},
		{12, 999, 999, 2450, 411, 441, 147},
	}
)

var footer = regexp.MustCompile(`(?m)^board (\d+)x\d+, target ply (\d+), (complete|incomplete), root: (\w+)`)

// checkAgainstReference compares a run's output with REFERENCE.md.
func checkAgainstReference(t *testing.T, out string, rows [][8]int64) {
	t.Helper()
	f := footer.FindStringSubmatch(out)
	if f == nil {
		t.Fatalf("no summary line in the output:\n%s", out)
	}
	size, _ := strconv.Atoi(f[1])
	target, _ := strconv.Atoi(f[2])
	if f[3] != "complete" {
		t.Errorf("run %s", f[3])
	}
	if len(rows) != target+1 {
		t.Fatalf("%d ply rows, want %d (plies 0..%d)", len(rows), target+1, target)
	}
	checked := 0
	switch size {
	case 8:
		for ply := 0; ply <= target && ply < len(ref8Positions); ply++ {
			r := rows[ply]
			if r[0] != int64(ply) || r[1] != ref8Positions[ply] || r[3] != ref8Edges[ply] || r[2] != 0 {
				t.Errorf("8x8 ply %d: %v; REFERENCE.md: %d positions, %d edges, none terminal", ply, r, ref8Positions[ply], ref8Edges[ply])
			}
			checked++
		}
		if target >= 9 {
			if r := rows[8]; r[4] != 43 || r[5] != 0 || r[6] != 0 {
				t.Errorf("8x8 ply 8 through ply %d: black/white/draw %d/%d/%d; REFERENCE.md: 43/0/0", target, r[4], r[5], r[6])
			}
		}
	case 4:
		for ply := 0; ply <= target && ply < len(ref4); ply++ {
			// Positions, terminal and edges do not depend on the target;
			// results are final only when the whole game is enumerated.
			got, want := [7]int64(rows[ply][:7]), ref4[ply]
			if target < 12 {
				got, want = [7]int64{got[0], got[1], got[2], got[3]}, [7]int64{want[0], want[1], want[2], want[3]}
			}
			if got != want {
				t.Errorf("4x4 ply %d: %v; REFERENCE.md: %v", ply, got, want)
			}
			checked++
		}
		if target == 12 && f[4] != "white" {
			t.Errorf("4x4 root %s; REFERENCE.md: a white win", f[4])
		}
	default:
		t.Fatalf("board %d: REFERENCE.md has no table for it", size)
	}
	if checked == 0 {
		t.Error("no ply of the output was checked against REFERENCE.md")
	}
}

// TestReadmeQuickstart runs every go run command of README.md's quickstart
// exactly as written, from the repository root, and checks what it prints
// against REFERENCE.md and against the output the README shows.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands, shown := quickstart(t, string(b))
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
	var first [][8]int64
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
			rows := table(strings.Split(out.String(), "\n"))
			checkAgainstReference(t, out.String(), rows)
			if i == 0 {
				first = rows
			}
		})
	}
	// The output the README shows is what the first command prints.
	if len(shown) > 0 && first != nil {
		want := table(shown[0])
		if len(want) != len(first) {
			t.Errorf("README.md shows %d ply rows for %q; it printed %d", len(want), runs[0], len(first))
		}
		for i := range min(len(want), len(first)) {
			if want[i] != first[i] {
				t.Errorf("README.md shows %v for %q; it printed %v", want[i], runs[0], first[i])
			}
		}
	}
}

func TestTableParsesEnumerateOutput(t *testing.T) {
	out := []string{
		"  ply  positions  terminal  edges  black  white  draw  unknown",
		"    0          1         0      0      0      1     0        0",
		"   12        999       999   2450    411    441   147        0",
		"board 4x4, target ply 12, complete, root: white, storage transactions: 743",
		"  7 1 2",
	}
	want := [][8]int64{{0, 1, 0, 0, 0, 1, 0, 0}, {12, 999, 999, 2450, 411, 441, 147, 0}}
	if got := table(out); !slices.Equal(got, want) {
		t.Errorf("table = %v, want %v", got, want)
	}
}

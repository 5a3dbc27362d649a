package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/bench"
	"github.com/reversi-cloud/reversi/internal/testkit"
)

// The shell commands written in a page's prose, in backticks, and how
// docs/README.md says each is tested: a command runs as written unless an
// HTML comment right after its closing backtick, <!-- test: KIND -->,
// marks it.
const kindMention = "mention" // names a command or part of one, or quotes output: syntax and flags only

// programs are the commands under cmd/, which a user may run by name once
// installed, as enumerate's "resume with: enumerate ..." line does.
var programs = []string{"bench", "enumerate", "inspect", "seed", "solve", "worker"}

// tools are the other commands whose name starts an inline command.
var tools = []string{"az", "bash", "curl", "docker", "docker-compose", "du", "eval", "git", "go", "helm", "kill", "kubectl", "make", "time"}

// unmarked are the first words of the commands that may run unmarked:
// nothing they do reaches outside the machine or runs for long, unlike
// az, kubectl or make test, which a marker must keep from running.
var unmarked = append([]string{"go", "du"}, programs...)

// mayRunUnmarked reports whether the inline command text may run
// without a marker: its first word is one of unmarked.
func mayRunUnmarked(text string) bool { return slices.Contains(unmarked, commandWords(text)[0]) }

// inlineCommand is a command in a page's prose.
type inlineCommand struct {
	file string // relative to the repository root
	line int    // of its closing backtick, from 1
	text string // line breaks inside the backticks made spaces
	kind string // the marker's kind, or "" to run it
}

func (c inlineCommand) String() string { return fmt.Sprintf("%s:%d: `%s`", c.file, c.line, c.text) }

var (
	codeSpan     = regexp.MustCompile("`([^`]+)`(<!-- test: ([a-z]+)\\b[^>]*-->)?")
	assignWord   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	placeholder  = regexp.MustCompile(`\bDIR\b`)
	trailComment = regexp.MustCompile(`\s+#.*$`)
)

// isCommand reports whether inline code is a command: its first word,
// after VAR=value assignments, is a program or a tool (or a path to
// one), and it has more words. A single word names a program.
func isCommand(text string) bool {
	words := commandWords(text)
	if len(words) < 2 {
		return false
	}
	w := words[0]
	return slices.Contains(programs, w) || slices.Contains(tools, w) ||
		strings.HasPrefix(w, "cmd/") || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "scripts/")
}

// commandWords are the words of a command after its VAR=value assignments.
func commandWords(text string) []string {
	words := strings.Fields(text)
	for len(words) > 0 && assignWord.MatchString(words[0]) {
		words = words[1:]
	}
	return words
}

// inlineCommands returns the commands in a page's prose, outside its
// fenced blocks.
func inlineCommands(t *testing.T, root, file string) []inlineCommand {
	t.Helper()
	text := testkit.Prose(readDoc(t, root, file))
	lines := strings.Split(text, "\n")
	// A marker anywhere but right after inline code would leave the
	// command it was meant for unmarked, or mark nothing.
	for i, l := range lines {
		for at := 0; ; at++ {
			j := strings.Index(l[at:], "<!-- test:")
			if j < 0 {
				break
			}
			at += j
			if strings.TrimSpace(l[:at]) != "" && l[at-1] != '`' {
				t.Errorf("%s:%d: a test marker in the prose, not right after a command's closing backtick", file, i+1)
			}
		}
	}
	var found []inlineCommand
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		code := strings.Join(strings.Fields(text[m[2]:m[3]]), " ")
		if !isCommand(code) {
			if m[4] >= 0 {
				t.Errorf("%s:%d: `%s` is marked, but it is not a command (docs/README.md says which inline code is)", file, 1+strings.Count(text[:m[3]], "\n"), code)
			}
			continue
		}
		c := inlineCommand{file: file, line: 1 + strings.Count(text[:m[3]], "\n"), text: code}
		switch {
		case m[6] >= 0:
			c.kind = text[m[6]:m[7]]
		case bench.IntroPattern.MatchString(lines[c.line-1]):
			// The harness's sentence above its table, pasted verbatim:
			// TestPerformanceTables checks the table against the command.
			c.kind = kindLong
		}
		found = append(found, c)
	}
	return found
}

// testedLines are the command lines of the sh blocks that tests run
// (sections, and run, interrupt and serve blocks), without their
// comments: an inline command that repeats one is tested there.
func testedLines(t *testing.T, root string) map[string]bool {
	t.Helper()
	tested := map[string]bool{}
	for _, file := range docFiles(t, root) {
		for _, b := range parseBlocks(t, root, file) {
			if b.lang != "sh" || b.section == "" && b.kind != kindRun && b.kind != kindInterrupt && b.kind != kindServe {
				continue
			}
			for _, l := range commandLines(b) {
				tested[strings.TrimSpace(trailComment.ReplaceAllString(l, ""))] = true
			}
		}
	}
	return tested
}

// TestDocsEveryInlineCommandIsTested checks that every command written in
// the prose of README.md and docs/*.md is run by a test, or marked with
// a kind that docs/README.md lists, and that each parses as bash.
func TestDocsEveryInlineCommandIsTested(t *testing.T) {
	root := repoRoot(t)
	tested := testedLines(t, root)
	n := 0
	for _, file := range docFiles(t, root) {
		for _, c := range inlineCommands(t, root, file) {
			n++
			t.Logf("%s [%s]", c, c.kind)
			switch c.kind {
			case "":
				if !tested[c.text] && !mayRunUnmarked(c.text) {
					t.Errorf("%s: a %s command runs only if marked: add <!-- test: KIND --> right after it (docs/README.md lists the kinds)", c, commandWords(c.text)[0])
				}
			case kindServe, kindAzure, kindCluster, kindLong, kindMention:
			default:
				t.Errorf("%s: unknown test kind %q for an inline command", c, c.kind)
			}
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = strings.NewReader(c.text + "\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: bash -n: %v\n%s", c, err, out)
			}
		}
	}
	if n == 0 {
		t.Error("no inline commands found")
	}
}

// TestIsCommand pins down which inline code counts as a command.
func TestIsCommand(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{"enumerate -plan", true},
		{"go run ./cmd/enumerate -h", true},
		{"cmd/solve -parallel 1", true},
		{"/usr/bin/time -v", true},
		{`eval "$(make -s azurite-env)"`, true},
		{"GOAMD64=v3 go build ./cmd/enumerate", true},
		{"inspect", false},          // names the program
		{"-plies N", false},         // a flag
		{"GOAMD64=v3", false},       // a setting
		{"#/moves/f5d6c3", false},   // an address
		{"lease lost", false},       // a message
		{"run", false},              // a run's name
		{"demo-work-poison", false}, // a queue
	} {
		if got := isCommand(tc.code); got != tc.want {
			t.Errorf("isCommand(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

// TestDocsInlineCommands runs the unmarked inline commands and the serve
// ones, from the repository root with the programs under cmd/ first on
// PATH and no storage settings in the environment. By the rules of
// docs/README.md, DIR is a directory holding a finished 8x8 run to ply 6,
// and a go test -bench command runs each benchmark once.
func TestDocsInlineCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the programs")
	}
	root := repoRoot(t)
	bin := binaries(t)
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AZURE_"):
		case k == "PATH":
			env = append(env, "PATH="+bin+string(os.PathListSeparator)+v)
		default:
			env = append(env, kv)
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := exec.Command(filepath.Join(bin, "enumerate"), "-plies", "6", "-data", dir, "-quiet").CombinedOutput(); err != nil {
		t.Fatalf("the run DIR stands for: %v\n%s", err, out)
	}
	tested := testedLines(t, root)
	before := rootEntries(t, root)
	t.Cleanup(func() {
		for name := range rootEntries(t, root) {
			if !before[name] {
				os.RemoveAll(filepath.Join(root, name))
			}
		}
	})
	ran := 0
	for _, file := range docFiles(t, root) {
		for _, c := range inlineCommands(t, root, file) {
			if tested[c.text] || c.kind != "" && c.kind != kindServe {
				continue
			}
			if c.kind == "" && !mayRunUnmarked(c.text) {
				// Left to TestDocsEveryInlineCommandIsTested, which
				// reports it: run, an unmarked `make pipeline-pgo` in a
				// draft rewrote the committed profiles.
				continue
			}
			script := placeholder.ReplaceAllString(c.text, dir)
			if words := commandWords(script); len(words) > 2 && words[0] == "go" && words[1] == "test" && slices.Contains(words, "-bench") {
				// The figures are the page's measurements; the test
				// checks only that the command runs.
				script = strings.Replace(script, "go test ", "go test -benchtime=1x ", 1)
			}
			ran++
			t.Run(fmt.Sprintf("%s:%d", c.file, c.line), func(t *testing.T) {
				if c.kind == kindServe {
					serve(t, root, env, docBlock{file: c.file, line: c.line}, script)
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				if out, err := start(ctx, root, env, script).CombinedOutput(); err != nil {
					t.Errorf("%s: %s: %v\n%s", c, script, err, out)
				}
			})
		}
	}
	if ran == 0 {
		t.Error("no inline command ran")
	}
}

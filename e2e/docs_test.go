package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/bench"
)

// The documentation's shell commands, and how docs/README.md says each
// block is tested: the line before a ```sh block is <!-- test: KIND ... -->,
// or the block lies in a <!-- NAME:begin ... --> section that a test of
// its own runs (readme_test.go).
const (
	kindRun       = "run"       // run as a bash script, after the page's earlier run blocks
	kindInterrupt = "interrupt" // first line interrupted once it shows progress; then the rest run
	kindServe     = "serve"     // each line serves HTTP until interrupted
	kindAzure     = "azure"     // needs a real Azure account: syntax and flags only
	kindCluster   = "cluster"   // needs a Docker engine or a Kubernetes cluster: syntax and flags only
	kindLong      = "long"      // too long for the suite: syntax and flags only
)

// sections are the named sections with tests of their own.
var sections = []string{"quickstart", "azurite-example", "inspect-example"}

// docBlock is one fenced code block of a page.
type docBlock struct {
	file    string // relative to the repository root
	line    int    // of the opening fence, from 1
	lang    string
	kind    string // for sh blocks outside a section: the test marker's kind
	section string // the named section it lies in, if any
	lines   []string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var (
	marker       = regexp.MustCompile(`^<!-- test: ([a-z]+)\b.*-->$`)
	sectionBegin = regexp.MustCompile(`^<!-- ([a-z-]+):begin\b`)
	sectionEnd   = regexp.MustCompile(`^<!-- ([a-z-]+):end -->`)
)

// docFiles are README.md and every page in docs/, relative to root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, filepath.Join("docs", filepath.Base(p)))
	}
	return files
}

// repoRoot returns the repository's root: the tests run in e2e/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readDoc returns the page at root/file (README.md, docs/...).
func readDoc(t *testing.T, root, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseBlocks reads a page's fenced code blocks with their markers.
func parseBlocks(t *testing.T, root, file string) []docBlock {
	t.Helper()
	page := readDoc(t, root, file)
	var blocks []docBlock
	var cur *docBlock
	section, prev := "", ""
	for i, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if trimmed == "```" {
				blocks = append(blocks, *cur)
				cur = nil
			} else {
				cur.lines = append(cur.lines, line)
			}
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "```"):
			cur = &docBlock{file: file, line: i + 1, lang: strings.TrimPrefix(trimmed, "```"), section: section}
			if m := marker.FindStringSubmatch(prev); m != nil {
				cur.kind = m[1]
			}
		case sectionBegin.MatchString(trimmed):
			section = sectionBegin.FindStringSubmatch(trimmed)[1]
		case sectionEnd.MatchString(trimmed):
			section = ""
		}
		if trimmed != "" {
			prev = trimmed
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: code block never closed", file, cur.line)
	}
	return blocks
}

// TestDocsEveryCommandIsTested checks that every sh block of README.md and
// docs/*.md says how it is tested, and that the blocks only checked for
// syntax parse as bash.
func TestDocsEveryCommandIsTested(t *testing.T) {
	root := repoRoot(t)
	n := 0
	for _, file := range docFiles(t, root) {
		for _, b := range parseBlocks(t, root, file) {
			if b.lang != "sh" {
				continue
			}
			n++
			switch {
			case b.section != "":
				if !slices.Contains(sections, b.section) {
					t.Errorf("%s: in section %q, which no test runs (known: %v)", b, b.section, sections)
				}
			case b.kind == "":
				t.Errorf("%s: an sh block without <!-- test: KIND --> on the line before it (docs/README.md lists the kinds)", b)
			case b.kind == kindAzure || b.kind == kindCluster || b.kind == kindLong:
				cmd := exec.Command("bash", "-n")
				cmd.Stdin = strings.NewReader(strings.Join(b.lines, "\n") + "\n")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: bash -n: %v\n%s", b, err, out)
				}
			case b.kind == kindRun || b.kind == kindInterrupt || b.kind == kindServe:
			default:
				t.Errorf("%s: unknown test kind %q", b, b.kind)
			}
		}
	}
	if n == 0 {
		t.Error("no sh blocks found")
	}
}

// TestDocsCommands runs the run, interrupt and serve blocks of each page in
// order, from the repository root, with no storage settings in the
// environment, and removes what they leave in the root.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	root := repoRoot(t)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AZURE_") {
			env = append(env, kv)
		}
	}
	dataDir := regexp.MustCompile(`-data \./([A-Za-z0-9_.-]+)`)
	for _, file := range docFiles(t, root) {
		var runnable []docBlock
		shown := map[int]docBlock{} // an interrupt block's line: the text block after it
		blocks := parseBlocks(t, root, file)
		for i, b := range blocks {
			if b.lang == "sh" && b.section == "" && (b.kind == kindRun || b.kind == kindInterrupt || b.kind == kindServe) {
				runnable = append(runnable, b)
				if b.kind == kindInterrupt && i+1 < len(blocks) && blocks[i+1].lang == "text" {
					shown[b.line] = blocks[i+1]
				}
			}
		}
		if len(runnable) == 0 {
			continue
		}
		t.Run(file, func(t *testing.T) {
			// Never touch a run of the same name a user keeps in the root.
			for _, b := range runnable {
				for _, m := range dataDir.FindAllStringSubmatch(strings.Join(b.lines, "\n"), -1) {
					if _, err := os.Stat(filepath.Join(root, m[1])); err == nil {
						t.Skipf("%s: ./%s exists; remove it to run this test", b, m[1])
					}
				}
			}
			before := rootEntries(t, root)
			t.Cleanup(func() {
				for name := range rootEntries(t, root) {
					if !before[name] {
						os.RemoveAll(filepath.Join(root, name))
					}
				}
			})
			for _, b := range runnable {
				switch b.kind {
				case kindRun:
					runScript(t, root, env, b)
				case kindInterrupt:
					runInterrupted(t, root, env, b, shown[b.line])
				case kindServe:
					for _, line := range commandLines(b) {
						serve(t, root, env, b, line)
					}
				}
				if t.Failed() {
					return // the later blocks build on this one
				}
			}
		})
	}
}

func rootEntries(t *testing.T, root string) map[string]bool {
	t.Helper()
	list, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range list {
		names[e.Name()] = true
	}
	return names
}

// commandLines are a block's lines that are not blank or only a comment.
func commandLines(b docBlock) []string {
	var out []string
	for _, l := range b.lines {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
			out = append(out, l)
		}
	}
	return out
}

// start runs script with bash in its own process group, so that a
// signal reaches go run and the program it runs alike.
func start(ctx context.Context, root string, env []string, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = root, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func runScript(t *testing.T, root string, env []string, b docBlock) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	script := strings.Join(b.lines, "\n")
	out, err := start(ctx, root, env, "set -e\n"+script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s\noutput:\n%s", b, err, script, out)
	}
}

// stepLine is the step in enumerate's status line, "ply 11: 4/13 bucket
// merges": it shows once the run is seeded and ply 0 complete, whatever
// step the status poll happened to read (a small run's plies go by
// faster than its polls).
var stepLine = regexp.MustCompile(`ply \d+: \d+/\d+ `)

// runInterrupted starts the block's first line, sends SIGINT once it has
// written a status line with its step to standard error, and requires the line that says how
// to resume, shown in the text block after it but for its numbers; then
// it runs the rest of the block.
func runInterrupted(t *testing.T, root string, env []string, b, shown docBlock) {
	t.Helper()
	lines := commandLines(b)
	if len(lines) < 2 {
		t.Fatalf("%s: an interrupt block needs the command to interrupt and the one that resumes", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := start(ctx, root, env, lines[0])
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	var once sync.Once
	r := bufio.NewReader(stderr)
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		all.Write(buf[:n])
		if stepLine.Match(all.Bytes()) {
			once.Do(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) })
		}
		if err != nil {
			break
		}
	}
	err = cmd.Wait()
	got := all.String()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("%s: %s: want a non-zero exit after SIGINT, got %v\nstderr:\n%s", b, lines[0], err, got)
	}
	data := regexp.MustCompile(`-data (\S+) -run (\S+)`).FindStringSubmatch(lines[0])
	want := "enumerate: interrupted at ply "
	resume := ""
	if data != nil {
		resume = "resume with: enumerate -data " + data[1] + " -run " + data[2]
	}
	if !strings.Contains(got, want) || !strings.Contains(got, resume) {
		t.Fatalf("%s: %s printed no %q ... %q line after SIGINT:\n%s", b, lines[0], want, resume, got)
	}
	last, _, _ := strings.Cut(got[strings.LastIndex(got, want):], "\n")
	t.Logf("%s: interrupted: %s", b, last)
	if len(shown.lines) > 0 {
		digits := regexp.MustCompile(`\d+`)
		if d := digits.ReplaceAllString(last, "N"); d != digits.ReplaceAllString(strings.TrimSpace(shown.lines[0]), "N") {
			t.Errorf("%s: after SIGINT it printed\n%s\nwhich is not the line %s shows but for its numbers:\n%s", b, last, shown, shown.lines[0])
		}
	}
	rest := b
	rest.lines = lines[1:]
	runScript(t, root, env, rest)
}

// serve starts line, waits until its -http address answers /api/report,
// then interrupts it.
func serve(t *testing.T, root string, env []string, b docBlock, line string) {
	t.Helper()
	m := regexp.MustCompile(`-http (\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("%s: %q: a serve line needs -http ADDR", b, line)
	}
	addr := m[1]
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	url := "http://" + addr + "/api/report"
	client := &http.Client{Timeout: 5 * time.Second}
	if resp, err := client.Get(url); err == nil {
		resp.Body.Close()
		t.Skipf("%s: something already answers at %s", b, addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := start(ctx, root, env, line)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("%s: %q did not stop within 30 s of SIGINT", b, line)
			<-exited
		}
	}()
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s: %q exited before serving: %v\n%s", b, line, err, out.String())
		case <-ctx.Done():
			t.Fatalf("%s: %q: nothing answered at %s", b, line, url)
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"plies"`)) {
			t.Fatalf("%s: %q: GET %s: %s\n%s", b, line, url, resp.Status, body)
		}
		return
	}
}

// TestPerformanceTables checks docs/performance.md against the harnesses
// that wrote it: every table in bench's format has bench's header and
// rows, under the sentence bench writes above them; the packed sizes are
// what TestSizes prints today; the Go benchmarks named exist.
func TestPerformanceTables(t *testing.T) {
	root := repoRoot(t)
	page := readDoc(t, root, "docs/performance.md")
	lines := strings.Split(page, "\n")

	// The harness's own sentence must match the pattern this test reads.
	if intro := bench.Intro("bench -plies 8", time.Now(), bench.Machine()); !bench.IntroPattern.MatchString(intro) {
		t.Errorf("bench.Intro %q does not match bench.IntroPattern", intro)
	}
	md := strings.Split(bench.Markdown(nil), "\n")
	header, rule := md[0], md[1]
	cell := []*regexp.Regexp{
		regexp.MustCompile(`^(yardstick|reference|external|embedded|azurite)( \(\d+ workers\))?$`),
		regexp.MustCompile(`^\d+$`),
		regexp.MustCompile(`^\d+\.\d{3}$`),
		regexp.MustCompile(`^\d+\.\d{3}( \(\+\d+\.\d\))?$`),
		regexp.MustCompile(`^\d+$`),
		regexp.MustCompile(`^(-|\d+\.\d{5})$`),
		regexp.MustCompile(`^(-|\d+\.\d{5})$`),
		regexp.MustCompile(`^(-|\d+\.\d{5})$`),
		regexp.MustCompile(`^(-|\d+\.\d{5})$`),
		regexp.MustCompile(`^(-|\d+\.\d)$`),
		regexp.MustCompile(`^(-|\d+)$`),
		regexp.MustCompile(`^\d+( / \d+)*$`),
		regexp.MustCompile(`^(-|\d+\.\d\d)$`),
		regexp.MustCompile(`^\d+\.\d$`),
		regexp.MustCompile(`^(-|ok)$`),
	}
	tables := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "| engine |") {
			continue
		}
		tables++
		where := fmt.Sprintf("docs/performance.md:%d", i+1)
		if l != header || i+1 >= len(lines) || lines[i+1] != rule {
			t.Errorf("%s: the table's header is not bench.Markdown's:\n%s\n%s", where, header, rule)
			continue
		}
		j := i - 1
		for j >= 0 && strings.TrimSpace(lines[j]) == "" {
			j--
		}
		intro := bench.IntroPattern.FindStringSubmatch(lines[max(j, 0)])
		if intro == nil {
			t.Errorf("%s: no sentence in bench.Intro's format above the table", where)
			continue
		}
		var engines, plies string
		args := strings.Fields(intro[1])
		for k := 1; k+1 < len(args); k++ {
			switch args[k] {
			case "-engines":
				engines = args[k+1]
			case "-plies":
				plies = args[k+1]
			}
		}
		for k := i + 2; k < len(lines) && strings.HasPrefix(lines[k], "|"); k++ {
			cells := strings.Split(strings.Trim(lines[k], "|"), "|")
			if len(cells) != len(cell) {
				t.Errorf("docs/performance.md:%d: %d cells, bench writes %d", k+1, len(cells), len(cell))
				continue
			}
			for c, re := range cell {
				if v := strings.TrimSpace(cells[c]); !re.MatchString(v) {
					t.Errorf("docs/performance.md:%d: column %d is %q, not in bench's format", k+1, c+1, v)
				}
			}
			engine, _, _ := strings.Cut(strings.TrimSpace(cells[0]), " ")
			if engines != "" && !slices.Contains(strings.Split(engines, ","), engine) {
				t.Errorf("docs/performance.md:%d: engine %s, but the command ran %s", k+1, engine, engines)
			}
			if ply := strings.TrimSpace(cells[1]); plies != "" && !plyIn(ply, plies) {
				t.Errorf("docs/performance.md:%d: ply %s, but the command ran plies %s", k+1, ply, plies)
			}
		}
	}
	if tables == 0 {
		t.Error("docs/performance.md: no table in bench's format")
	}

	// Go benchmarks named in the page exist.
	benchLines := regexp.MustCompile(`(?m)^Benchmark(\w+)`)
	benchOutput := regexp.MustCompile(`(?m)^Benchmark.*$`)
	benchFormat := regexp.MustCompile(`^Benchmark[\w/]+(-\d+)?\s+\d+\s+[\d.]+ ns/op(\s+[\d.]+ [\w/-]+)*$`)
	for pkg, names := range map[string][]string{
		"./packed":           benchLines.FindAllString(pageSection(page, "## Packed blobs: decoding speed"), -1),
		"./storage/embedded": benchLines.FindAllString(pageSection(page, "## Embedded storage"), -1),
		"./board":            benchLines.FindAllString(pageSection(page, "## Board rules"), -1),
	} {
		if len(names) == 0 {
			t.Errorf("docs/performance.md names no benchmark of %s", pkg)
			continue
		}
		list := goTestList(t, root, pkg)
		for _, l := range benchOutput.FindAllString(pageSection(page, map[string]string{"./packed": "## Packed blobs: decoding speed", "./storage/embedded": "## Embedded storage", "./board": "## Board rules"}[pkg]), -1) {
			if !benchFormat.MatchString(l) {
				t.Errorf("docs/performance.md: %q is not a line go test -bench prints", l)
			}
		}
		for _, n := range names {
			top, _, _ := strings.Cut(strings.TrimPrefix(n, "Benchmark"), "/")
			if !slices.Contains(list, "Benchmark"+top) {
				t.Errorf("docs/performance.md names benchmark %s; go test -list finds no Benchmark%s in %s", n, top, pkg)
			}
		}
	}

	// The packed sizes are what TestSizes prints.
	if testing.Short() {
		return
	}
	var sizes []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ply ") && strings.Contains(l, "B/edge") {
			sizes = append(sizes, l)
		}
	}
	if len(sizes) == 0 {
		t.Fatal("docs/performance.md: no TestSizes lines")
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestSizes$", "-v", "./packed")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -run TestSizes -v ./packed: %v\n%s", err, out)
	}
	for _, l := range sizes {
		if !bytes.Contains(out, []byte(": "+l+"\n")) {
			t.Errorf("docs/performance.md shows\n%s\nwhich TestSizes no longer prints:\n%s", l, out)
		}
	}
}

// plyIn reports whether ply is in a -plies list such as 8-11 or 8,10.
func plyIn(ply, list string) bool {
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		var p, l, h int
		fmt.Sscan(ply, &p)
		fmt.Sscan(lo, &l)
		fmt.Sscan(hi, &h)
		if p >= l && p <= h {
			return true
		}
	}
	return false
}

// pageSection returns the part of a page from the heading to the next
// heading of the same level.
func pageSection(text, heading string) string {
	_, rest, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return body
}

func goTestList(t *testing.T, root, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "test", "-list", ".", pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go test -list . %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestDocsLinks checks that every relative link and image of README.md and
// docs/*.md names a file or directory of the repository.
func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range docFiles(t, root) {
		for _, m := range link.FindAllStringSubmatch(readDoc(t, root, file), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(root, filepath.Dir(file), target)
			if rel, err := filepath.Rel(root, path); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %s leaves the repository", file, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", file, m[1], err)
			}
		}
	}
}

package testkit

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Data-driven tests, in the style of cockroachdb/pebble's: a file holds
// commands, each followed by the output it must produce:
//
//	# a comment
//	command key=value flag
//	----
//	expected output,
//	up to the next blank line
//
// The test interprets each command and returns its output as text; a
// mismatch fails the test at the command's line. With -rewrite the file
// is written again with the outputs the test produced.
var rewrite = flag.Bool("rewrite", false, "rewrite data-driven test files with the outputs produced")

// Command is one command of a data-driven test file.
type Command struct {
	Pos  string // file:line, for messages
	Name string
	Args map[string]string // key=value, or key alone with ""
	Want string            // the expected output
	// line is the command's line; end the line after its expected output.
	line, end int
}

// Has reports whether the command has argument key.
func (c *Command) Has(key string) bool {
	_, ok := c.Args[key]
	return ok
}

// Str is argument key; the test fails when it is missing.
func (c *Command) Str(t testing.TB, key string) string {
	t.Helper()
	v, ok := c.Args[key]
	if !ok {
		t.Fatalf("%s: %s needs %s=", c.Pos, c.Name, key)
	}
	return v
}

// Int is argument key as a number, or def when it is missing.
func (c *Command) Int(t testing.TB, key string, def int) int {
	t.Helper()
	v, ok := c.Args[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q is not a number", c.Pos, key, v)
	}
	return n
}

// DataDriven runs the commands of the file at path in order, each
// through run, and compares their outputs with the file's.
func DataDriven(t *testing.T, path string, run func(t *testing.T, c *Command) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	cmds, err := parseCommands(path, lines)
	if err != nil {
		t.Fatal(err)
	}
	var out []string // the file again, with the outputs produced
	copied := 0
	for _, c := range cmds {
		got := strings.TrimRight(run(t, c), "\n")
		if got != c.Want && !*rewrite {
			t.Errorf("%s: %s: got\n%s\nwant\n%s", c.Pos, lines[c.line], got, c.Want)
		}
		out = append(out, lines[copied:c.line+2]...)
		if got != "" {
			out = append(out, strings.Split(got, "\n")...)
		}
		copied = c.end
	}
	if *rewrite {
		out = append(out, lines[copied:]...)
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// parseCommands reads the commands of a file's lines.
func parseCommands(path string, lines []string) ([]*Command, error) {
	var cmds []*Command
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := &Command{Pos: fmt.Sprintf("%s:%d", path, i+1), Args: map[string]string{}, line: i}
		fields := strings.Fields(line)
		c.Name = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.Args[k] = v
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "----" {
			return nil, fmt.Errorf("%s: %s: expected ---- on the next line", c.Pos, c.Name)
		}
		j := i + 2
		for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
			j++
		}
		c.Want, c.end = strings.Join(lines[i+2:j], "\n"), j
		cmds = append(cmds, c)
		i = j
	}
	return cmds, nil
}

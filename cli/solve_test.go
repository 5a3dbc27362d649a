package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/solve"
)

// answer drops the nodes and time, which vary, from an output line.
var answer = regexp.MustCompile(` nodes=\d+ time=\S+$`)

func TestSolveCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "positions.txt")
	if err := os.WriteFile(file, []byte("# start\n-----OX--XO----- X ignored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		want   []string // output lines without nodes and time
		code   int
		stderr string // a substring of the error line
	}{
		{name: "4x4 start", stdin: "-----OX--XO----- X\n", want: []string{"b1 -10"}},
		{name: "all best moves", args: []string{"-all"}, stdin: "-----OX--XO----- X\n", want: []string{"b1,a2,d3,c4 -10"}},
		{name: "file", args: []string{file}, want: []string{"b1 -10"}},
		{name: "comments, blanks, pass, game over",
			stdin: "# c\n\n  \nXO-------------- O\nXXXXXXXXXXXXXXXX X\n------------------------------------ X\n",
			want:  []string{"pa -16", "-- +16", "-- +0"}},
		{name: "6x6 and 8x8",
			stdin: strings.Repeat("X", 35) + "O X\n" + strings.Repeat("X", 63) + "- O\n",
			want:  []string{"-- +34", "-- -64"}},
		{name: "parallel, answers in input order", args: []string{"-parallel", "3"},
			stdin: "-----OX--XO----- X\nXO-------------- O\n" + strings.Repeat("X", 35) + "O X\n-----OX--XO----- X\n",
			want:  []string{"b1 -10", "pa -16", "-- +34", "b1 -10"}},
		{name: "threads", args: []string{"-threads", "3", "-parallel", "2", "-all"},
			stdin: "-----OX--XO----- X\n" + strings.Repeat("X", 35) + "O X\n",
			want:  []string{"b1,a2,d3,c4 -10", "-- +34"}},
		{name: "node limit", args: []string{"-max-nodes", "1"}, stdin: "-----OX--XO----- X\n", code: 1, stderr: "stdin:1: solve: node limit reached"},
		{name: "bad line", stdin: "-----OX--XO----- X\n----\n", want: []string{"b1 -10"}, code: 1, stderr: "solve: stdin:2: "},
		{name: "bad side", stdin: "-----OX--XO----- Z\n", code: 1, stderr: "stdin:1: solve: bad position line: side to move"},
		{name: "missing file", args: []string{filepath.Join(dir, "none")}, code: 1, stderr: "none"},
		{name: "bad flag", args: []string{"-table-mb", "-3"}, code: 2, stderr: "-table-mb"},
		{name: "bad parallel", args: []string{"-parallel", "0"}, code: 2, stderr: "-parallel"},
		{name: "bad threads", args: []string{"-threads", "0"}, code: 2, stderr: "-threads"},
		{name: "bad node limit", args: []string{"-max-nodes", "-1"}, code: 2, stderr: "-max-nodes"},
		{name: "unknown flag", args: []string{"-x"}, code: 2, stderr: "run solve -h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := solveLines(context.Background(), tc.args, strings.NewReader(tc.stdin), &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut.String())
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if l != "" {
					got = append(got, answer.ReplaceAllString(l, ""))
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("output %q, want %q", got, tc.want)
			}
			if e := errOut.String(); !strings.Contains(e, tc.stderr) || strings.Count(e, "\n") > 1 {
				t.Errorf("stderr %q, want one line containing %q", e, tc.stderr)
			}
		})
	}
}

// TestSolveInterrupted cancels the command's context, as Ctrl-C does: it
// stops with code 130 and names the position it was on.
func TestSolveInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := solveLines(ctx, nil, strings.NewReader("-----OX--XO----- X\n"), &out, &errOut)
	if code != ExitInterrupted || !strings.Contains(errOut.String(), "context canceled") {
		t.Errorf("exit %d, stderr %q; want %d and context canceled", code, errOut.String(), ExitInterrupted)
	}
}

func TestSolveHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := solveLines(context.Background(), []string{"-h"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"usage: solve", "-table-mb", "-all", "-parallel", "-threads", "-max-nodes", "empty squares going to the winner"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// gatedWriter holds every write until gate is closed.
type gatedWriter struct {
	gate chan struct{}
	buf  bytes.Buffer
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	<-w.gate
	return w.buf.Write(p)
}

// TestSolveRunsAhead holds the output at the first answer and feeds more
// positions: the solver must go on taking them (the reader takes every
// line) rather than wait for the first answer to be written, and the
// answers then come out in input order.
func TestSolveRunsAhead(t *testing.T) {
	s, err := solve.New(solve.Options{TableBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	const lines = 50
	pr, pw := io.Pipe()
	w := &gatedWriter{gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		done <- solvePositions(context.Background(), []*solve.Solver{s}, solve.NewCores(1), 1, false, nil, pr, bufio.NewWriter(w))
	}()
	fed := make(chan error, 1)
	go func() {
		for range lines {
			// Returns once the reader has taken the line.
			if _, err := io.WriteString(pw, "-----OX--XO----- X\n"); err != nil {
				fed <- err
				return
			}
		}
		fed <- pw.Close()
	}()
	select {
	case err := <-fed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // the lines take microseconds
		t.Fatal("the reader stopped taking lines while the first answer waited to be written")
	}
	close(w.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(w.buf.String()), "\n")
	if len(got) != lines {
		t.Fatalf("%d answers, want %d", len(got), lines)
	}
	for i, l := range got {
		if a := answer.ReplaceAllString(l, ""); a != "b1 -10" {
			t.Fatalf("answer %d: %q", i, l)
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProgressOutput checks how status lines, given every second, reach
// standard error: on a terminal each rewrites the line in place and one
// newline ends them; in a file or a pipe a whole line when a step starts
// and then every progressEvery, and nothing after the last.
func TestProgressOutput(t *testing.T) {
	type status struct {
		line, step string
		at         time.Duration
	}
	run := []status{
		{"1s a", "expanding ply 1", time.Second},
		{"2s b", "ply 9: expansion", 2 * time.Second},
		{"3s c", "ply 9: expansion", 3 * time.Second},
		{"11s d", "ply 9: expansion", 11 * time.Second},
		{"12s e", "ply 9: expansion", 12 * time.Second},
		{"13s f", "ply 9: merges", 13 * time.Second},
		{"22s g", "ply 9: merges", 22 * time.Second},
		{"23s h", "ply 9: merges", 23 * time.Second},
	}
	for _, tt := range []struct {
		terminal bool
		want     string
	}{
		{true, "\r1s a \r2s b \r3s c \r11s d \r12s e \r13s f \r22s g \r23s h \n"},
		{false, "1s a\n2s b\n12s e\n13s f\n23s h\n"},
	} {
		var buf bytes.Buffer
		out := &progressOutput{w: &buf, terminal: tt.terminal}
		for _, s := range run {
			out.status(s.line, s.step, s.at)
		}
		out.end()
		if buf.String() != tt.want {
			t.Errorf("terminal %v: wrote %q, want %q", tt.terminal, buf.String(), tt.want)
		}
	}
}

// TestIsTerminal checks that a file and a pipe are not terminals, and a
// character device is.
func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"file": f, "pipe": w} {
		if isTerminal(f) {
			t.Errorf("%s: a terminal", name)
		}
	}
	// /dev/null is a character device, as a terminal is: what the test
	// can open everywhere.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if !isTerminal(null) {
		t.Errorf("%s: not a character device", os.DevNull)
	}
}

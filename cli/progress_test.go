package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProgressOutput checks how status lines reach standard error: on a
// terminal rewritten in place every second and ended once; in a file or
// a pipe whole lines, less often, with nothing after the last.
func TestProgressOutput(t *testing.T) {
	tests := []struct {
		terminal bool
		every    time.Duration
		want     string
	}{
		{terminal: true, every: time.Second, want: "\rfirst \rsecond \n"},
		{terminal: false, every: progressEvery, want: "first\nsecond\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		out := progressOutputFor(Env{Stderr: &buf, StderrTerminal: tt.terminal})
		out.show("first")
		out.show("second")
		out.end()
		if out.every != tt.every || buf.String() != tt.want {
			t.Errorf("terminal %v: every %v, wrote %q; want every %v, %q", tt.terminal, out.every, buf.String(), tt.every, tt.want)
		}
	}
	if progressEvery <= time.Second {
		t.Errorf("progressEvery %v: a log would keep a line a second", progressEvery)
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

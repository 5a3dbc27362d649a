package cli

import (
	"strings"
	"testing"
)

// TestEnumerateShowsAPosition runs 4x4 to the end on the embedded backend
// and shows the position after black's b1, which white wins 3-11 with a1.
func TestEnumerateShowsAPosition(t *testing.T) {
	code, out, errOut := runCmd(t, Enumerate, "-board", "4", "-quiet", "-workers", "2", "-moves", "b1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"root: white, perfect play 3-11 (black-white), root score -10",
		"after b1:",
		"key        w00000000000606020000000000040000",
		"ply        1",
		"result     white (perfect play 3-11)",
		"score      -10 (black minus white, empty squares to the winner)",
		"best moves a1 (white keeps the win)",
		"parents    1",
		"children   3 distinct",
		// 9-1 with 6 squares empty is +14, better for black than 12-4's +8.
		"  c1       b00000000000606060000000000020202  black (perfect play 9-1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPositionFlagsAreCheckedBeforeTheRun(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-board", "4", "-moves", "a1"}, "-moves: board: move 1: a1 for black"},
		{[]string{"-board", "4", "-position", "b0"}, "-position: "},
		{[]string{"-board", "4", "-moves", "b1", "-position", "b0"}, "give one"},
		{[]string{"-engine", "reference", "-moves", "f5"}, "leave out -engine reference"},
	} {
		code, _, errOut := runCmd(t, Enumerate, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}
}

// TestEmbeddedRunIsInspectableLater: with -data, an embedded run outlives
// enumerate, and inspect reads it from another process's backend.
func TestEmbeddedRunIsInspectableLater(t *testing.T) {
	dir := t.TempDir() + "/made-if-missing"
	if code, _, errOut := runCmd(t, Enumerate, "-board", "4", "-quiet", "-data", dir, "-run", "four"); code != 0 {
		t.Fatalf("enumerate: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "root: white, perfect play 3-11"},
		{[]string{"-moves", "b1"}, "result     white (perfect play 3-11)"},
		{[]string{"-check"}, "check clean: run complete"},
	} {
		args := append([]string{"-storage", "embedded", "-data", dir, "-run", "four"}, tc.args...)
		code, out, errOut := runCmd(t, Inspect, args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("inspect %v: exit %d, output lacks %q:\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

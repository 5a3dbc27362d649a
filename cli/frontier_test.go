package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/solve"
)

// TestEnumerateSolve4x4: solving 4x4 at ply 4 gives the whole game's
// score, -10 (docs/reference.md), in the JSON report and the table.
func TestEnumerateSolve4x4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "four.json")
	code, out, errOut := runCmd(t, Enumerate, "-board", "4", "-plies", "4", "-solve", "-quiet", "-workers", "2", "-json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := readReport(t, path)
	if rep.RootScore == nil || *rep.RootScore != -10 || rep.Root != "white" || !rep.Solve {
		t.Errorf("root %s, root score %v, solve %v; want white, -10, true", rep.Root, rep.RootScore, rep.Solve)
	}
	if !strings.Contains(out, "root: white, root score -10") {
		t.Errorf("the table lacks the root score:\n%s", out)
	}
}

// ffoLine returns the position line and published score (for the side
// to move) of an FFO position in ../solve/testdata.
func ffoLine(t *testing.T, name string) (string, int) {
	t.Helper()
	f, err := os.Open("../solve/testdata/ffo-40-49.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 5 && fields[4] == name {
			score, err := strconv.Atoi(fields[2])
			if err != nil {
				t.Fatal(err)
			}
			return fields[0] + " " + fields[1], score
		}
	}
	t.Fatalf("no %s in the FFO file", name)
	return "", 0
}

// TestEnumerateSolvesFFO starts runs at FFO endgame positions and solves
// them a few plies in: the root score must be the published one. FFO #40
// 2 plies in runs in the normal suite; #45 3 plies in (1,031 positions
// of 20 empty squares to solve) takes far longer and runs with
// REVERSI_FFO45=1.
func TestEnumerateSolvesFFO(t *testing.T) {
	cases := []struct {
		name  string
		plies int
	}{{"ffo40", 2}}
	if os.Getenv("REVERSI_FFO45") == "1" {
		cases = append(cases, struct {
			name  string
			plies int
		}{"ffo45", 3})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line, score := ffoLine(t, tc.name)
			_, p, err := solve.ParsePosition(line)
			if err != nil {
				t.Fatal(err)
			}
			if p.Side == board.White { // the report's score is black's
				score = -score
			}
			path := filepath.Join(t.TempDir(), "ffo.json")
			code, _, errOut := runCmd(t, Enumerate, "-start", line, "-plies", strconv.Itoa(tc.plies), "-solve", "-quiet", "-workers", "2", "-json", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			rep := readReport(t, path)
			if rep.RootScore == nil || *rep.RootScore != score || !rep.Complete || rep.TargetPly != tc.plies {
				t.Errorf("complete %v, target ply %d, root score %v; want complete, %d, %+d", rep.Complete, rep.TargetPly, rep.RootScore, tc.plies, score)
			}
		})
	}
}

// TestEnumerateFromAStartShowsAPosition: -moves counts from the run's
// start, and a position shows its ply from there, its exact score and its
// best moves. The start is the usual 4x4 start after b1, which white wins
// by -10 with a1.
func TestEnumerateFromAStartShowsAPosition(t *testing.T) {
	code, out, errOut := runCmd(t, Enumerate, "-start", "-X---XX--XO----- O", "-plies", "3", "-solve", "-quiet", "-workers", "2", "-moves", "a1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"root: white, root score -10",
		"after a1:",
		"key        b00000000000606030000000000040201",
		"ply        1",
		"result     white (score -10)",
		"score      -10 (black minus white, empty squares to the winner)",
		"best moves ",
		"parents    1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

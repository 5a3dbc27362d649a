package reference

import (
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/report"
)

// TestEnumerate8x8 checks the 8x8 table of docs/reference.md through ply 8 and
// the 43 black wins at ply 8 found by enumerating through ply 9.
func TestEnumerate8x8(t *testing.T) {
	positions, edges := testkit.Ref8x8Positions, testkit.Ref8x8Edges
	res, err := Enumerate(board.MustNew(8), 9)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Board != 8 || rep.TargetPly != 9 || !rep.Complete || rep.Engine != "reference" || rep.StorageTransactions != 0 || rep.Score != nil {
		t.Errorf("report header: %+v", rep)
	}
	if len(rep.Plies) != 10 || len(res.Plies) != 10 {
		t.Fatalf("%d report rows and %d ply maps, want 10", len(rep.Plies), len(res.Plies))
	}
	for n := range positions {
		row := rep.Plies[n]
		if row.Ply != n || row.Positions != positions[n] || row.Edges != edges[n] || row.Terminal != 0 {
			t.Errorf("ply %d: %+v, want %d positions, %d edges, no terminal", n, row, positions[n], edges[n])
		}
		if int64(len(res.Plies[n])) != row.Positions {
			t.Errorf("ply %d: map holds %d positions, report says %d", n, len(res.Plies[n]), row.Positions)
		}
	}
	if row := rep.Plies[8]; row.BlackWins != 43 || row.WhiteWins != 0 || row.Draws != 0 || row.Unknown != positions[8]-43 {
		t.Errorf("ply 8 results: %+v, want 43 black wins and nothing else decided", row)
	}
	if rep.Root != "unknown" {
		t.Errorf("root %q, want unknown", rep.Root)
	}
	// Games first end at ply 9 (they must, for ply 8 to have decided
	// positions), and at the target ply only terminal positions are decided.
	if row := rep.Plies[9]; row.Terminal == 0 || row.Unknown != row.Positions-row.Terminal {
		t.Errorf("ply 9: %+v, want terminal positions and every other one unknown", row)
	}
}

// TestEnumerate4x4 checks every cell of the 4x4 table, the root and the
// perfect-play score from docs/reference.md.
func TestEnumerate4x4(t *testing.T) {
	res, err := Enumerate(board.MustNew(4), 12)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if len(rep.Plies) != len(testkit.Ref4x4) {
		t.Fatalf("%d rows, want %d", len(rep.Plies), len(testkit.Ref4x4))
	}
	for n, want := range testkit.Ref4x4 {
		p := rep.Plies[n]
		got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}
		if p.Ply != n || p.Unknown != 0 || got != want {
			t.Errorf("ply %d: %+v, want ply %d, no unknown and (positions, terminal, edges, black, white, draw) = %v", n, p, n, want)
		}
	}
	if rep.Root != "white" {
		t.Errorf("root %q, want white", rep.Root)
	}
	if rep.Score == nil || *rep.Score != (report.Score{Black: 3, White: 11}) {
		t.Errorf("score %+v, want 3-11", rep.Score)
	}
	var sb strings.Builder
	if err := rep.WriteTable(&sb); err != nil || !strings.Contains(sb.String(), "perfect play 3-11") {
		t.Errorf("table: %v\n%s", err, sb.String())
	}
}

// TestScoreAgreesWithResults runs the two propagations against each other
// on the whole 4x4 game: the result rules (win, draw, loss) and minimax over
// disc counts must agree on who wins every position.
func TestScoreAgreesWithResults(t *testing.T) {
	b := board.MustNew(4)
	res, err := Enumerate(b, 12)
	if err != nil {
		t.Fatal(err)
	}
	scores := perfectPlay(b, res.Plies)
	for n, ply := range res.Plies {
		for p, r := range ply {
			s, ok := scores[n][p]
			if !ok {
				t.Fatalf("ply %d: %v has no score", n, p)
			}
			want := board.Draw
			switch {
			case s.black > s.white:
				want = board.BlackWins
			case s.white > s.black:
				want = board.WhiteWins
			}
			if r != want {
				t.Fatalf("ply %d: %v is %v by the rules but scores %d-%d", n, p, r, s.black, s.white)
			}
		}
	}
}

// TestPartialTargets checks what a target short of the game's end leaves
// undecided: no score, and an unknown root while the start is far from the
// target ply.
func TestPartialTargets(t *testing.T) {
	b := board.MustNew(4)
	for target := 0; target < 12; target++ {
		res, err := Enumerate(b, target)
		if err != nil {
			t.Fatal(err)
		}
		if res.Report.Score != nil {
			t.Errorf("target %d: score set before the game was enumerated", target)
		}
		if last := res.Report.Plies[target]; last.Unknown != last.Positions-last.Terminal {
			t.Errorf("target %d: %d unknown of %d non-terminal positions at the target ply", target, last.Unknown, last.Positions-last.Terminal)
		}
	}
	res, err := Enumerate(b, 0)
	if err != nil || res.Report.Root != "unknown" || len(res.Report.Plies) != 1 || res.Report.Plies[0].Positions != 1 {
		t.Errorf("target 0: %+v, %v", res, err)
	}
}

func TestEnumerateRejectsTargets(t *testing.T) {
	tests := []struct {
		b      *board.Board
		target int
	}{
		{board.MustNew(4), -1},
		{board.MustNew(4), 13},
		{board.MustNew(6), 33},
		{board.MustNew(8), 61},
		{nil, 1},
	}
	for _, tc := range tests {
		if _, err := Enumerate(tc.b, tc.target); err == nil {
			t.Errorf("Enumerate(%v, %d) succeeded", tc.b, tc.target)
		}
	}
	if _, err := TakizawaCount(board.MustNew(4), 3); err == nil {
		t.Error("TakizawaCount with 3 discs succeeded")
	}
}

func TestTakizawaCount(t *testing.T) {
	tests := []struct {
		size, discs int
		want        int64
	}{
		// The start alone; and one position after the first move, whose
		// four images are one pair under symmetry.
		{8, 4, 1},
		{8, 5, 1},
		// Published figure (Takizawa 2023, docs/reference.md).
		{8, 14, 2958551},
	}
	for _, tc := range tests {
		got, err := TakizawaCount(board.MustNew(tc.size), tc.discs)
		if err != nil || got != tc.want {
			t.Errorf("TakizawaCount(%dx%d, %d) = %d, %v; want %d", tc.size, tc.size, tc.discs, got, err, tc.want)
		}
	}
}

func BenchmarkEnumerate8x8Ply9(b *testing.B) {
	bd := board.MustNew(8)
	for b.Loop() {
		if _, err := Enumerate(bd, 9); err != nil {
			b.Fatal(err)
		}
	}
}

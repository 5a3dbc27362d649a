package e2e

import (
	"os"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/solve"
)

// TestAzuriteSolveFromAPosition seeds a run at a 6x6 position with 16
// empty squares (-start), solved 2 plies in (-solve), runs two worker
// processes on Azurite, and requires the solver's score of the start.
func TestAzuriteSolveFromAPosition(t *testing.T) {
	b := board.MustNew(6)
	start, err := b.ParseMoves("e4c5b4a5a4e3a6b5d5b6b3e5f4a3f2f3")
	if err != nil {
		t.Fatal(err)
	}
	// The same position as -start reads it.
	const line = "-----------XOOOOOOXOXXOXXXOOO-XO---- X"
	if _, again, err := solve.ParsePosition(line); err != nil || again != start {
		t.Fatalf("%q reads as %v, %v; want the position after the moves", line, again, err)
	}
	want, err := solve.Solve(b, start, solve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := runDistributed(t, 6, 2, 2, "-start", line, "-solve", "-blob-positions", "40", "-bucket-blobs", "4")
	// Black is to move, so the solver's score is black's.
	if !rep.Complete || rep.RootScore == nil || *rep.RootScore != want.Score {
		t.Errorf("complete %v root score %v, want %+d", rep.Complete, rep.RootScore, want.Score)
	}
	if rep.Start != start.Text() || !rep.Solve {
		t.Errorf("report start %q solve %v, want %q true", rep.Start, rep.Solve, start.Text())
	}
}

// TestAzuriteSolvesFFO45 seeds a run at FFO endgame #45 (black to move,
// published score +6), solved 3 plies in: 1,031 positions of 21 empty
// squares, solved by two worker processes on Azurite in tasks of
// -solve-positions each. It takes long (tens of minutes on two cores), so
// it runs only with REVERSI_FFO45=1 (and -timeout 2h or so).
func TestAzuriteSolvesFFO45(t *testing.T) {
	if os.Getenv("REVERSI_FFO45") != "1" {
		t.Skip("solves 1,031 positions of 21 empties; set REVERSI_FFO45=1")
	}
	const line = "---XXXX-X-XXXO--XXOXOO--XXXOXO--XXOXXO---OXXXOO-O-OOOO------OO-- X"
	rep := runDistributed(t, 8, 3, 2, "-start", line, "-solve")
	if !rep.Complete || rep.RootScore == nil || *rep.RootScore != 6 {
		t.Errorf("complete %v root score %v, want +6", rep.Complete, rep.RootScore)
	}
}

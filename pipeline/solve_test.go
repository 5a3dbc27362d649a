package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
)

// solveRun runs cfg to completion on the embedded backend and opens it.
func solveRun(t *testing.T, cfg RunConfig) (*report.Report, *Run) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := runComplete(t, ctx, teststore.Embedded(t), cfg)
	rep, err := r.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rep, r
}

// solverScore is p's exact score by package solve: black minus white.
func solverScore(t *testing.T, s *solve.Solver, b *board.Board, p board.Position) int {
	t.Helper()
	res, err := s.Solve(b, p)
	if err != nil {
		t.Fatal(err)
	}
	if p.Side == board.White {
		return -res.Score
	}
	return res.Score
}

// checkScores requires every position of plies 0 to last to have the
// score the solver gives it, and a result that agrees.
func checkScores(t *testing.T, r *Run, last int) {
	t.Helper()
	solver, err := solve.New(solve.Options{TableBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for ply := 0; ply <= last; ply++ {
		scores, err := r.Scores(context.Background(), ply)
		if err != nil {
			t.Fatal(err)
		}
		results, err := r.Results(context.Background(), ply)
		if err != nil {
			t.Fatal(err)
		}
		if len(scores) == 0 {
			t.Fatalf("ply %d holds no positions", ply)
		}
		bad := 0
		for p, s := range scores {
			want := solverScore(t, solver, r.Board, p)
			if !s.Exact || int(s.Diff) != want || results[p] != s.Result() {
				if bad++; bad <= 3 {
					t.Errorf("ply %d %s: score %+v result %v, solver %+d", ply, p.Text(), s, results[p], want)
				}
			}
		}
	}
}

// TestSolveAtTheTargetPly: 4x4 solved at ply 4 ends with the score of the
// whole game, -10 (docs/reference.md), and every position of plies 0 to 4
// has the solver's score. The target ply is cut into final blobs of
// SolvePositions, the others of BlobPositions.
func TestSolveAtTheTargetPly(t *testing.T) {
	rep, r := solveRun(t, RunConfig{Name: "solvefour", Config: runstore.Config{Board: 4, Target: 4, Sizes: runstore.Sizes{BlobPositions: 20, BucketBlobs: 4}, Solve: true, SolvePositions: 3}})
	for _, p := range rep.Plies {
		size := 20
		if p.Ply == 4 {
			size = 3
		}
		if least := (p.Positions + int64(size) - 1) / int64(size); int64(p.Blobs) < least {
			t.Errorf("ply %d: %d positions in %d final blobs; want blobs of at most %d", p.Ply, p.Positions, p.Blobs, size)
		}
	}
	if rep.Root != "white" || rep.RootScore == nil || *rep.RootScore != -10 {
		t.Errorf("root %s, root score %v; want white, -10", rep.Root, rep.RootScore)
	}
	if rep.Score != nil {
		t.Errorf("final count %+v, though no line was followed to the end", rep.Score)
	}
	if p := rep.Plies[4]; p.Unknown != 0 || p.BlackWins+p.WhiteWins+p.Draws != p.Positions {
		t.Errorf("ply 4: %+v, want every position decided", p)
	}
	checkScores(t, r, 4)
}

// TestScoresOfTheWholeGame: without a solver, the scores of a 4x4 run to
// the end of the game are the solver's too, position by position: both
// give empty squares to the winner.
func TestScoresOfTheWholeGame(t *testing.T) {
	_, r := solveRun(t, RunConfig{Name: "wholefour", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 50, BucketBlobs: 4}}})
	checkScores(t, r, 12)
}

// sixStart is a 6x6 position with 16 empty squares, black to move: the
// middle legal move at every turn from the start.
const sixStart = "e4c5b4a5a4e3a6b5d5b6b3e5f4a3f2f3"

// TestSolveFromAPosition: a run seeded at a 6x6 position with 16 empty
// squares and solved 2 plies in agrees with solving that position.
func TestSolveFromAPosition(t *testing.T) {
	b := board.MustNew(6)
	start, err := b.ParseMoves(sixStart)
	if err != nil {
		t.Fatal(err)
	}
	if empty := 36 - start.Discs(); empty != 16 || start.Side != board.Black {
		t.Fatalf("%d empty squares, %s to move; want 16, black", empty, start.Side)
	}
	rep, r := solveRun(t, RunConfig{Name: "solvesix", Config: runstore.Config{Board: 6, Target: 2, Sizes: runstore.Sizes{BlobPositions: 40, BucketBlobs: 4}, Start: start, Solve: true}})
	res, err := solve.Solve(b, start, solve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := res.Score // black is to move
	if rep.RootScore == nil || *rep.RootScore != want {
		t.Errorf("root score %v, solver %+d", rep.RootScore, want)
	}
	if rep.Start != start.Text() || !rep.Solve {
		t.Errorf("report start %q solve %v, want %q true", rep.Start, rep.Solve, start.Text())
	}
	checkScores(t, r, 1)
	// Plies count from the start: ply 0 is the start, whose lookup shows
	// its score and the solver's best moves.
	info, err := r.Lookup(context.Background(), start)
	if err != nil {
		t.Fatal(err)
	}
	var best []string
	for _, sq := range res.BestMoves {
		best = append(best, b.SquareName(sq))
	}
	if info.Ply != 0 || !info.Score.Exact || int(info.Score.Diff) != want || strings.Join(info.BestMoves(), " ") != strings.Join(best, " ") {
		t.Errorf("lookup of the start: ply %d score %+v best %v; want ply 0, %+d, %v", info.Ply, info.Score, info.BestMoves(), want, best)
	}
	// A solved position of the target ply shows the solver's best moves.
	scores, err := r.Scores(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	for p := range scores {
		if b.Terminal(p) {
			continue
		}
		info, err := r.Lookup(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := solve.Solve(b, p, solve.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if info.Ply != 2 || len(info.BestMoves()) != len(res.BestMoves) {
			t.Errorf("lookup of %s: ply %d best %v, solver %v", p.Text(), info.Ply, info.BestMoves(), res.BestMoves)
		}
		break
	}
}

// TestSeedRefusesOtherStartOrSolve: the settings row records the start
// and the solve flag, so seeding again with others is refused in one line.
func TestSeedRefusesOtherStartOrSolve(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	b := board.MustNew(6)
	start, err := b.ParseMoves(sixStart)
	if err != nil {
		t.Fatal(err)
	}
	cfg := RunConfig{Name: "reseed", Config: runstore.Config{Board: 6, Target: 2, Start: start, Solve: true}}
	if _, err := Seed(ctx, be, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := Seed(ctx, be, cfg); err != nil {
		t.Errorf("seeding again with the same settings: %v", err)
	}
	for name, other := range map[string]RunConfig{
		"usual start": {Name: "reseed", Config: runstore.Config{Board: 6, Target: 2, Solve: true}},
		"no solve":    {Name: "reseed", Config: runstore.Config{Board: 6, Target: 2, Start: start}},
	} {
		_, err := Seed(ctx, be, other)
		if err == nil || !strings.Contains(err.Error(), "already exists") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line saying the run already exists", name, err)
		}
	}
	r, err := OpenRun(ctx, be, "reseed")
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Start != start || !r.Config.Solve {
		t.Errorf("reopened with start %s solve %v", r.Config.Start.Text(), r.Config.Solve)
	}
}

// TestFinishedStart: a run may start from a finished game; its score is
// then the final count's, empty squares going to the winner.
func TestFinishedStart(t *testing.T) {
	b, start, err := solve.ParsePosition("XXXXXXXXXXXXX-OO X")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Terminal(start) {
		t.Fatal("the start is not a finished game")
	}
	rep, _ := solveRun(t, RunConfig{Name: "finished", Config: runstore.Config{Board: 4, Target: 0, Start: start}})
	if p := rep.Plies[0]; p.Positions != 1 || p.Terminal != 1 || p.BlackWins != 1 {
		t.Errorf("ply 0: %+v, want one terminal position, won by black", p)
	}
	// 13-2 with one square empty: +12 under the WOF rule.
	if rep.RootScore == nil || *rep.RootScore != 12 || rep.Score == nil || *rep.Score != (report.Score{Black: 13, White: 2}) {
		t.Errorf("root score %v, final count %v; want +12, 13-2", rep.RootScore, rep.Score)
	}
}

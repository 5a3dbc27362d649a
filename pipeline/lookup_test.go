package pipeline

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/runstore"
)

// checkLookups compares Lookup with the reference engine for perPly
// positions of every ply (all of them where a ply has fewer), terminal
// positions first, each asked in a random orientation: result, parents and
// children's results.
func checkLookups(t *testing.T, ctx context.Context, r *Run, ref *reference.Result, perPly int) {
	t.Helper()
	b := r.Board
	rng := rand.New(rand.NewPCG(1, 2))
	// parents[n][c] lists the ply-n-1 positions that have c as a child.
	parents := make([]map[board.Position][]board.Position, len(ref.Plies))
	for n := 1; n < len(ref.Plies); n++ {
		parents[n] = map[board.Position][]board.Position{}
		for q := range ref.Plies[n-1] {
			kids, _ := b.Children(q, nil)
			for _, c := range kids {
				parents[n][c] = append(parents[n][c], q)
			}
		}
	}
	for n, ply := range ref.Plies {
		keys := make([]board.Position, 0, len(ply))
		for p := range ply {
			keys = append(keys, p)
		}
		slices.SortFunc(keys, board.Compare)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		slices.SortStableFunc(keys, func(a, b2 board.Position) int {
			return boolOrder(b.Terminal(b2)) - boolOrder(b.Terminal(a))
		})
		for _, c := range keys[:min(perPly, len(keys))] {
			asked := b.Transform(c, rng.IntN(8))
			info, err := r.Lookup(ctx, asked)
			if err != nil {
				t.Fatalf("ply %d %s: %v", n, asked.Text(), err)
			}
			if info.Canonical != c || info.Ply != n || !info.Resolved || info.Result != ply[c] {
				t.Errorf("ply %d %s: canonical %s ply %d resolved %v result %v; want %s %d true %v",
					n, asked.Text(), info.Canonical.Text(), info.Ply, info.Resolved, info.Result, c.Text(), n, ply[c])
			}
			if b.Terminal(c) && info.Score != backtrack.TerminalScore(b, c) {
				t.Errorf("terminal %s: score %+v, want its disc count", c.Text(), info.Score)
			}
			var wantParents []board.Position
			if n > 0 {
				wantParents = slices.Clone(parents[n][c])
			}
			slices.SortFunc(wantParents, board.Compare)
			gotParents := slices.Clone(info.Parents)
			slices.SortFunc(gotParents, board.Compare)
			if !slices.Equal(gotParents, wantParents) {
				t.Errorf("ply %d %s: parents %v, want %v", n, c.Text(), gotParents, wantParents)
			}
			kids, moves := b.Children(asked, nil)
			if len(info.Children) != len(kids) {
				t.Errorf("ply %d %s: %d children, want %d", n, c.Text(), len(info.Children), len(kids))
			}
			nMoves := 0
			for _, ch := range info.Children {
				nMoves += len(ch.Moves)
				want, inRun := board.Unknown, n+1 < len(ref.Plies)
				if inRun {
					want = ref.Plies[n+1][ch.Canonical]
				}
				if ch.InRun != inRun || (inRun && (!ch.Resolved || ch.Result != want)) {
					t.Errorf("ply %d %s child %v: in run %v result %v, want %v %v", n, c.Text(), ch.Moves, ch.InRun, ch.Result, inRun, want)
				}
				for _, mv := range ch.Moves {
					sq, err := b.ParseSquare(mv)
					if err != nil {
						t.Fatal(err)
					}
					if q, err := b.Play(asked, sq); err != nil || b.Canonical(q) != ch.Canonical {
						t.Errorf("ply %d %s: move %s does not reach %s", n, asked.Text(), mv, ch.Canonical.Text())
					}
				}
			}
			if nMoves != moves {
				t.Errorf("ply %d %s: %d moves listed, want %d", n, asked.Text(), nMoves, moves)
			}
			for _, mv := range info.BestMoves() {
				sq, _ := b.ParseSquare(mv)
				q, _ := b.Play(asked, sq)
				if ref.Plies[n+1][b.Canonical(q)] != info.Result {
					t.Errorf("ply %d %s: best move %s does not keep the %v", n, c.Text(), mv, info.Result)
				}
			}
		}
	}
}

// boolOrder is 1 for true, 0 for false.
func boolOrder(v bool) int {
	if v {
		return 1
	}
	return 0
}

func TestLookupOutsideTheRun(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "small", Config: runstore.Config{Board: 6, Target: 3}}
	if _, err := RunLocal(ctx, be, cfg, 1, WorkerConfig{}, testLogger(t), nil); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRun(ctx, be, "small")
	if err != nil {
		t.Fatal(err)
	}
	b := r.Board
	start := b.Start()
	deep := start
	for range 4 { // ply 4, beyond the target
		if deep, err = b.Play(deep, bits.TrailingZeros64(b.Moves(deep))); err != nil {
			t.Fatal(err)
		}
	}
	unreachable := board.Position{Occ: start.Occ | 1, White: start.White, Side: board.White} // a1 filled at ply 1
	for name, p := range map[string]board.Position{"beyond the target": deep, "unreachable": unreachable} {
		if _, err := r.Lookup(ctx, p); !errors.Is(err, ErrNotInRun) {
			t.Errorf("%s: err %v, want ErrNotInRun", name, err)
		}
	}
	info, err := r.Lookup(ctx, b.Start())
	if err != nil {
		t.Fatal(err)
	}
	if info.Resolved && info.Result != board.Unknown || len(info.Parents) != 0 || len(info.Children) != 1 || len(info.Children[0].Moves) != 4 {
		t.Errorf("start: %+v; want unknown, no parents, one child reached by 4 moves", info)
	}
}

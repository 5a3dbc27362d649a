package solve

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// countdown is a context that reports itself cancelled from its n-th Err
// call on: a cancellation in the middle of a search at a point that does
// not depend on timing.
type countdown struct {
	context.Context
	n atomic.Int64 // the threads of a solve all poll it
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) <= 0 {
		return context.Canceled
	}
	return nil
}

// TestStop stops solves by context and by node budget, then checks that
// the stopped Solver still solves the position exactly: what its table
// learnt before the stop must be true.
func TestStop(t *testing.T) {
	b := board.MustNew(8)
	var p board.Position
	var want Result
	// A position big enough that a search polls many times.
	for seed := int64(1); want.Nodes < 50*pollNodes; seed++ {
		p = randomPosition(b, rand.New(rand.NewSource(seed)), 16)
		var err error
		if want, err = Solve(b, p, Options{TableBytes: 1 << 20}); err != nil {
			t.Fatal(err)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		during   int64 // cancelled at the during-th look at the context
		maxNodes int64
		err      error
	}{
		{name: "cancelled before", ctx: cancelled, err: context.Canceled},
		{name: "cancelled during", during: 10, err: context.Canceled},
		{name: "node limit", ctx: context.Background(), maxNodes: 20 * pollNodes, err: ErrNodeLimit},
		{name: "node limit not reached", ctx: context.Background(), maxNodes: want.Nodes + 1},
	} {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				ctx := tc.ctx
				if tc.during > 0 {
					ctx = newCountdown(tc.during)
				}
				maxNodes := tc.maxNodes
				if tc.err == nil && threads > 1 {
					maxNodes *= 10 // threads search more nodes than one does
				}
				s, err := New(Options{TableBytes: 1 << 20, MaxNodes: maxNodes, Threads: threads})
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.SolveContext(ctx, b, p)
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				if tc.err == nil {
					if got.Score != want.Score || !slices.Equal(got.BestMoves, want.BestMoves) {
						t.Fatalf("%+d %v, want %+d %v", got.Score, got.BestMoves, want.Score, want.BestMoves)
					}
					return
				}
				if got.Nodes >= want.Nodes {
					t.Errorf("stopped after %d nodes, the whole solve takes %d", got.Nodes, want.Nodes)
				}
				if tc.maxNodes > 0 && got.Nodes < tc.maxNodes {
					t.Errorf("stopped after %d nodes, below the budget %d", got.Nodes, tc.maxNodes)
				}
				if tc.maxNodes > 0 {
					return // the budget is spent for good: every solve stops
				}
				got, err = s.Solve(b, p)
				if err != nil || got.Score != want.Score || !slices.Equal(got.BestMoves, want.BestMoves) {
					t.Fatalf("after the stop: %+d %v, %v; want %+d %v", got.Score, got.BestMoves, err, want.Score, want.BestMoves)
				}
			})
		}
	}
}

package solve

import (
	"math/rand"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// BenchmarkEndgame solves random 8x8 positions 11 empties from the end
// each with a new table that fits in the cache: the time per node of the last
// plies, which hold most nodes of a solve, with little noise from memory.
func BenchmarkEndgame(b *testing.B) {
	bd := board.MustNew(8)
	rng := rand.New(rand.NewSource(3))
	var ps []board.Position
	for len(ps) < 200 {
		if p := randomPosition(bd, rng, 11); !bd.Terminal(p) {
			ps = append(ps, p)
		}
	}
	var nodes int64
	for b.Loop() {
		for _, p := range ps {
			res, err := Solve(bd, p, Options{TableBytes: 1 << 16})
			if err != nil {
				b.Fatal(err)
			}
			nodes += res.Nodes
		}
	}
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(nodes), "ns/node")
}

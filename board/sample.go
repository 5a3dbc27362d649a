package board

import (
	"math/bits"
	"math/rand"
)

// Midgame returns n positions of random games from b's start: those of
// a third to two thirds of the board's empty squares into the game (plies
// 20 to 40 of 8x8) that are not over, in the order played, the bulk of
// what an enumeration expands. The games are seeded, so the sample is the
// same on every machine: the board benchmarks time their work on it.
func (b *Board) Midgame(n int) []Position {
	empty := b.size*b.size - 4
	lo, hi := empty/3, 2*empty/3
	rng := rand.New(rand.NewSource(42))
	var ps []Position
	for len(ps) < n {
		b.playRandom(rng, func(p Position) {
			if ply := b.Ply(p); ply >= lo && ply <= hi && len(ps) < n && !b.Terminal(p) {
				ps = append(ps, p)
			}
		})
	}
	return ps
}

// playRandom plays uniformly random legal moves from the start until the
// game is over, calling visit with every position on the way, and
// returns the last.
func (b *Board) playRandom(rng *rand.Rand, visit func(p Position)) Position {
	p := b.Start()
	for {
		visit(p)
		m := b.Moves(p)
		if m == 0 {
			return p
		}
		for k := rng.Intn(bits.OnesCount64(m)); k > 0; k-- {
			m &= m - 1
		}
		var err error
		if p, err = b.Play(p, bits.TrailingZeros64(m)); err != nil {
			panic(err) // a move from Moves is legal
		}
	}
}

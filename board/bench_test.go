package board

import (
	"math/bits"
	"testing"
)

// midgame is the positions the benchmarks time: Board.Midgame's 1,024.
func midgame(b *Board) []Position { return b.Midgame(1024) }

var sinkU uint64
var sinkP Position

func BenchmarkMoves(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sinkU ^= bd.Moves(ps[i&1023])
	}
}

func BenchmarkPlay(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	sqs := make([]int, len(ps))
	for i, p := range ps {
		sqs[i] = bits.TrailingZeros64(bd.Moves(p))
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q, err := bd.Play(ps[i&1023], sqs[i&1023])
		if err != nil {
			b.Fatal(err)
		}
		sinkP = q
	}
}

func BenchmarkCanonical(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sinkP = bd.Canonical(ps[i&1023])
	}
}

func BenchmarkChildren(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	buf := make([]Position, 0, 64)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf, _ = bd.Children(ps[i&1023], buf[:0])
	}
}

func BenchmarkText(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	for i := 0; b.Loop(); i++ {
		_ = ps[i&1023].Text()
	}
}

func BenchmarkParseText(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.Text()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := bd.ParseText(texts[i&1023]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendKey(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	buf := make([]byte, 0, KeyLen)
	for i := 0; b.Loop(); i++ {
		buf = ps[i&1023].AppendKey(buf[:0])
	}
}

func BenchmarkDecodeKey(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	keys := make([][]byte, len(ps))
	for i, p := range ps {
		keys[i] = p.AppendKey(nil)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := bd.DecodeKey(keys[i&1023]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTerminal(b *testing.B) {
	bd := MustNew(8)
	ps := midgame(bd)
	n := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if bd.Terminal(ps[i&1023]) {
			n++
		}
	}
	sinkU += uint64(n)
}

package solve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

var (
	patternGen   = flag.Bool("patterngen", false, "TestPatternWeights: solve the training positions and fit the pattern weights (tens of minutes of CPU)")
	patternWrite = flag.Bool("patterngen.write", false, "TestPatternWeights: write the fitted weights to eval_patterns.bin instead of comparing")
	patternN     = flag.Int("patterngen.n", 300000, "TestPatternWeights: training positions")
	patternMin   = flag.Int("patterngen.min", 12, "TestPatternWeights: fewest empties of a training position")
	patternMax   = flag.Int("patterngen.max", 16, "TestPatternWeights: most empties of a training position")
	patternData  = flag.String("patterngen.data", "", "TestPatternWeights: file keeping the solved training positions: those it holds are read, the rest solved and appended")
)

// Training positions come from games that start with a few random moves
// and go on mostly with the best move by the linear evaluation, sometimes
// a random one: positions of the kind a game reaches, with the mistakes
// a search tree explores. Each is solved exactly.
const patternRandom = 0.25 // the chance of a random move after the opening

// patternPosition plays game i and returns the position it stops at, or
// false when the game ended first.
func patternPosition(b *board.Board, i int) (board.Position, bool) {
	rng := rand.New(rand.NewPCG(uint64(i), 2026))
	g := geometries[8]
	target := *patternMin + rng.IntN(*patternMax-*patternMin+1)
	opening := 4 + rng.IntN(16)
	p := b.Start()
	for ply := 0; 64-p.Discs() > target; ply++ {
		legal := b.Moves(p)
		if legal == 0 {
			return p, false
		}
		var sq int
		if ply < opening || rng.Float64() < patternRandom {
			for k := rng.IntN(bits.OnesCount64(legal)); k > 0; k-- {
				legal &= legal - 1
			}
			sq = bits.TrailingZeros64(legal)
		} else {
			best := math.MaxInt
			own, opp := p.Mover(), p.Opponent()
			for m := legal; m != 0; m &= m - 1 {
				s := bits.TrailingZeros64(m)
				f := flips(s, own, opp)
				x := uint64(1) << uint(s)
				if v := g.linearEval(opp&^f, own|f|x); v < best {
					best, sq = v, s
				}
			}
		}
		p, _ = b.Play(p, sq)
	}
	return p, !b.Terminal(p)
}

// patternSamples returns the first n training positions with their exact
// scores, reading those path holds and solving and appending the rest.
func patternSamples(t *testing.T, n int, path string) []evalSample {
	set, err := readEvalSamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) >= n {
		return set[:n]
	}
	var w *bufio.Writer
	if path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w = bufio.NewWriter(f)
		defer w.Flush()
	}
	b := board.MustNew(8)
	// Games are numbered; game i gives sample i or nothing, so the set is
	// the same however the solving is shared out. Samples are solved in
	// chunks and kept in order.
	const chunk = 1024
	next := 0 // the next game
	// Skip the games whose samples were read.
	for have := 0; have < len(set); next++ {
		if _, ok := patternPosition(b, next); ok {
			have++
		}
	}
	workers := runtime.GOMAXPROCS(0)
	solvers := make([]*Solver, workers)
	for i := range solvers {
		solvers[i] = newSolverOpts(t, Options{OneBestMove: true})
	}
	for len(set) < n {
		var games []board.Position
		for len(games) < chunk {
			if p, ok := patternPosition(b, next); ok {
				games = append(games, p)
			}
			next++
		}
		scores := make([]int, len(games))
		var wg sync.WaitGroup
		for wk := range workers {
			wg.Go(func() {
				for j := wk; j < len(games); j += workers {
					res, err := solvers[wk].Solve(b, games[j])
					if err != nil {
						panic(err)
					}
					scores[j] = res.Score
				}
			})
		}
		wg.Wait()
		for j, p := range games {
			x := evalSample{own: p.Mover(), opp: p.Opponent(), score: scores[j]}
			set = append(set, x)
			if w != nil {
				writeEvalSample(w, x)
			}
		}
		if w != nil {
			w.Flush()
		}
		t.Logf("%d positions solved", len(set))
	}
	return set[:n]
}

// patternFit is a model being fitted: pattern weights and linear weights,
// in discs.
type patternFit struct {
	w     [nPatterns][]float64
	lin   [nLinear]float64
	scale [nLinear]float64 // each linear feature is fitted divided by its spread
}

// fitSample is a training position as the fit sees it.
type fitSample struct {
	idx   [nInstances]uint16
	f     [nLinear]float64
	score float64
}

func (m *patternFit) predict(x *fitSample) float64 {
	v := 0.0
	for i, in := range instances {
		v += m.w[in.shape][x.idx[i]]
	}
	for j, f := range x.f {
		v += m.lin[j] * f
	}
	return v
}

// fitPatterns fits the weights by stochastic gradient descent on the
// squared error, holding out every tenth position to measure the error,
// and returns them with the held-out rms error in discs.
func fitPatterns(set []evalSample, log func(string, ...any)) (*patternFit, float64) {
	m := &patternFit{}
	for k := range m.w {
		m.w[k] = make([]float64, patternSize[k])
	}
	xs := make([]fitSample, len(set))
	var sum, sq [nLinear]float64
	for i, s := range set {
		x := &xs[i]
		patternIndexes(s.own, s.opp, &x.idx)
		var f [nLinear]int
		empty := ^(s.own | s.opp)
		linearFeatures(s.own, s.opp, empty, moves(s.own, s.opp, empty), moves(s.opp, s.own, empty), &f)
		for j, v := range f {
			x.f[j] = float64(v)
			sum[j] += float64(v)
			sq[j] += float64(v * v)
		}
		x.score = float64(s.score)
	}
	for j := range m.scale {
		n := float64(len(set))
		m.scale[j] = math.Sqrt(max(sq[j]/n-(sum[j]/n)*(sum[j]/n), 0))
		if j == lBias || m.scale[j] == 0 {
			m.scale[j] = 1
		}
		for i := range xs {
			xs[i].f[j] /= m.scale[j]
		}
	}
	var train, test []int
	for i := range xs {
		if i%10 == 9 {
			test = append(test, i)
		} else {
			train = append(train, i)
		}
	}
	rms := func(ids []int) float64 {
		e := 0.0
		for _, i := range ids {
			d := m.predict(&xs[i]) - xs[i].score
			e += d * d
		}
		return math.Sqrt(e / float64(len(ids)))
	}
	mirror := shapeMirrors()
	rng := rand.New(rand.NewPCG(3, 2026))
	lr := 0.002
	best := math.Inf(1)
	for epoch := range 40 {
		rng.Shuffle(len(train), func(a, b int) { train[a], train[b] = train[b], train[a] })
		for _, i := range train {
			x := &xs[i]
			d := lr * (x.score - m.predict(x))
			for i, in := range instances {
				m.w[in.shape][x.idx[i]] += d
				if j := mirror[in.shape]; j != nil && j[x.idx[i]] != x.idx[i] {
					m.w[in.shape][j[x.idx[i]]] += d
				}
			}
			for j, f := range x.f {
				m.lin[j] += d * f
			}
		}
		e := rms(test)
		log("epoch %d: rms %.3f train, %.3f held out", epoch, rms(train), e)
		if e > best*0.999 {
			break
		}
		best = e
		lr *= 0.85
	}
	return m, rms(test)
}

func TestPatternWeights(t *testing.T) {
	if !*patternGen {
		t.Skip("-patterngen fits the pattern weights (tens of minutes of CPU)")
	}
	set := patternSamples(t, *patternN, *patternData)
	m, rms := fitPatterns(set, t.Logf)
	t.Logf("%d positions, held-out rms error %.2f discs", len(set), rms)
	lin, w := m.weights()
	if *patternWrite {
		if err := writePatternWeights("eval_patterns.bin", lin, w); err != nil {
			t.Fatal(err)
		}
		return
	}
	if lin != patternLinear {
		t.Errorf("fitted linear weights %v, committed %v", lin, patternLinear)
	}
	for k := range w {
		if !slices.Equal(w[k], patternWeights[k]) {
			t.Errorf("fitted weights of shape %d differ from the committed ones", k)
		}
	}
}

// shapeMirrors maps each index of a shape that some symmetry of the board
// maps onto itself (every shape but the corner's 2x5 block: a line is
// mirrored end to end, a corner's 3x3 block about its diagonal) to the
// index of its mirror image. The fit moves an index and its image
// together, so that the weights, and the evaluation, are the same for
// the eight images of a position.
func shapeMirrors() [nPatterns][]uint16 {
	var mirror [nPatterns][]uint16
	for k, sqs := range patternSquares {
		for o := 1; o < 8 && mirror[k] == nil; o++ {
			perm := make([]int, len(sqs)) // digit i goes to digit perm[i]
			for i, sq := range sqs {
				perm[i] = slices.Index(sqs, orientSquare(sq, o))
				if perm[i] < 0 {
					perm = nil
					break
				}
			}
			if perm == nil {
				continue
			}
			mirror[k] = make([]uint16, patternSize[k])
			for idx := range patternSize[k] {
				v, rest := 0, idx
				for i := range sqs {
					d := rest % 3
					rest /= 3
					p := 1
					for range perm[i] {
						p *= 3
					}
					v += d * p
				}
				mirror[k][idx] = uint16(v)
			}
		}
	}
	return mirror
}

// weights returns the fitted model in evalScale units, as
// eval_patterns.bin holds it.
func (m *patternFit) weights() (lin [nLinear]int, w [nPatterns][]int16) {
	for j := range lin {
		lin[j] = int(math.Round(evalScale * m.lin[j] / m.scale[j]))
	}
	for k := range w {
		w[k] = make([]int16, len(m.w[k]))
		for i, x := range m.w[k] {
			w[k][i] = int16(max(min(math.Round(evalScale*x), math.MaxInt16), math.MinInt16))
		}
	}
	return lin, w
}

// writePatternWeights writes eval_patterns.bin.
func writePatternWeights(path string, lin [nLinear]int, w [nPatterns][]int16) error {
	var raw bytes.Buffer
	for _, x := range lin {
		binary.Write(&raw, binary.LittleEndian, int16(x))
	}
	for k := range w {
		binary.Write(&raw, binary.LittleEndian, w[k])
	}
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, z.Bytes(), 0o644)
}

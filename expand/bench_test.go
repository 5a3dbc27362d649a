package expand

import (
	"bytes"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/internal/testkit"
)

// ply9 returns the 434,029 canonical positions of 8x8 ply 9, about as
// many as a final blob of ply 13 holds, and 64 splitters of ply 10 taken
// evenly from a sorted sample of their children.
var ply9 = sync.OnceValues(func() ([]board.Position, []board.Position) {
	b := board.MustNew(8)
	frontier := testkit.Ply(b, 9)
	var kids []board.Position
	var sample []board.Position
	for i := 0; i < len(frontier); i += 97 {
		kids, _ = b.Children(frontier[i], kids[:0])
		sample = append(sample, kids...)
	}
	slices.SortFunc(sample, board.Compare)
	var splitters []board.Position
	for i := 1; i < 64; i++ {
		splitters = append(splitters, sample[i*len(sample)/64])
	}
	return frontier, splitters
})

// narrowPly10 returns a sixteenth of 8x8 ply 10 in its sorted order,
// 184,911 positions from its middle: parents whose children share more
// of their high bits than ply 9's, as a real blob of ply 12 or 13, a
// 536th or a 1,759th of its ply, has children sharing still more.
var narrowPly10 = sync.OnceValue(func() []board.Position {
	all := slices.SortedFunc(slices.Values(testkit.Ply(board.MustNew(8), 10)), board.Compare)
	return all[len(all)/2 : len(all)/2+len(all)/16]
})

// BenchmarkExpandBlob is an expansion task's CPU work on one final blob
// of ply 9: generating the edges, sorting them and packing them. reused
// runs every task in the same buffer, as a worker does after its first
// task; fresh allocates it anew each time, as every task did before the
// buffers were pooled. ns/edge (wall) and cpu-ns/edge (the process's
// CPU time, the figure to trust on a shared machine) compare with
// board's BenchmarkChildren (its ns/op is for about 10 edges).
func BenchmarkExpandBlob(b *testing.B) {
	positions, splitters := ply9()
	bd := board.MustNew(8)
	for _, fresh := range []bool{false, true} {
		name := "reused"
		if fresh {
			name = "fresh"
		}
		b.Run(name, func(b *testing.B) {
			buf := new(buffer)
			var edges int64
			cpu := cputime.Process()
			for b.Loop() {
				if fresh {
					buf = new(buffer)
				}
				_, _, st, err := buf.run(bd, positions, 3, allParents, splitters)
				if err != nil {
					b.Fatal(err)
				}
				edges += st.Edges
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(edges), "ns/edge")
			testkit.PerCPU(b, cpu, edges/int64(b.N), "cpu-ns/edge")
		})
	}
}

// BenchmarkExpandStages splits BenchmarkExpandBlob/reused into its
// stages, each timed alone on the same input. The CPU time of sort
// includes copying the unsorted edges in before each sort.
func BenchmarkExpandStages(b *testing.B) {
	positions, splitters := ply9()
	bd := board.MustNew(8)
	l, ok := edgeLayout(positions, allParents)
	if !ok {
		b.Fatal("ply 9's children do not fit in 16-byte edges")
	}
	unsorted, st, g := l.generate(bd, positions, nil)
	scratch := make([]edge, len(unsorted))
	sorted := slices.Clone(unsorted)
	sortEdges(sorted, scratch, &g.occ)
	splitSides(sorted, scratch, g.whites)
	var cpu time.Duration
	perEdge := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Edges), "ns/edge")
		testkit.PerCPU(b, cpu, st.Edges, "cpu-ns/edge")
	}
	b.Run("generate", func(b *testing.B) {
		es := make([]edge, 0, len(unsorted))
		cpu = cputime.Process()
		for b.Loop() {
			es, _, _ = l.generate(bd, positions, es[:0])
		}
		perEdge(b)
	})
	b.Run("sort", func(b *testing.B) {
		es := slices.Clone(unsorted)
		cpu = cputime.Process()
		for b.Loop() {
			b.StopTimer()
			copy(es, unsorted)
			b.StartTimer()
			sortEdges(es, scratch, &g.occ)
			splitSides(es, scratch, g.whites)
		}
		perEdge(b)
	})
	// Generating and sorting, in a row and into the first pass's
	// buckets (firstpass.go), which runEdges takes for a task this large.
	b.Run("generate+sort", func(b *testing.B) {
		es := make([]edge, 0, len(unsorted))
		cpu = cputime.Process()
		for b.Loop() {
			var g generated
			es, _, g = l.generate(bd, positions, es[:0])
			sortEdges(es, scratch, &g.occ)
			splitSides(es, scratch, g.whites)
		}
		perEdge(b)
	})
	b.Run("buckets", func(b *testing.B) {
		var k bucketed
		moves := movesAbout(bd, positions)
		tmp := make([]edge, moves+moves/8+sideBuckets*chunkEdges)
		cpu = cputime.Process()
		var es []edge
		for b.Loop() {
			l.generateBuckets(bd, positions, moves, &k, es)
			es = k.sort(tmp)
			es = es[:cap(es)]
		}
		perEdge(b)
	})
	b.Run("pack", func(b *testing.B) {
		var buf bytes.Buffer
		cpu = cputime.Process()
		for b.Loop() {
			if _, _, _, err := pack(&buf, edgeRun{l, sorted, 3}, splitters); err != nil {
				b.Fatal(err)
			}
		}
		perEdge(b)
	})
}

// BenchmarkSortEdges compares sortEdges with dedup.SortEntries, the
// sort of the same edges as 32-byte entries, on ply 9's children (edges,
// entries), and times sortEdges on the children of a sixteenth of ply 10
// (narrow), whose high bits differ less, as a real task's children's do.
// A sort of the smallest ranges that edges favoured was nearly even on
// narrow and lost in runs to ply 13 (docs/performance.md): narrow is the
// nearer. ns/edge is wall time; cpu-ns/edge the process's CPU time.
func BenchmarkSortEdges(b *testing.B) {
	positions, _ := ply9()
	bd := board.MustNew(8)
	l, _ := edgeLayout(positions, allParents)
	unsorted, _, g := l.generate(bd, positions, nil)
	entries, _ := Positions(bd, positions, 3, allParents, nil)
	scratch := make([]edge, len(unsorted))
	narrow := narrowPly10()
	nl, _ := edgeLayout(narrow, allParents)
	narrowEdges, _, ng := nl.generate(bd, narrow, nil)
	// run times sort, which sorts n edges (or entries) afresh each time.
	run := func(b *testing.B, n int, sort func()) {
		cpu := cputime.Process()
		for b.Loop() {
			sort()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/edge")
		testkit.PerCPU(b, cpu, int64(n), "cpu-ns/edge")
	}
	sortCopy := func(b *testing.B, in []edge, occ *occSpan) {
		es := slices.Clone(in)
		run(b, len(in), func() {
			b.StopTimer()
			copy(es, in)
			b.StartTimer()
			sortEdges(es, scratch, occ)
		})
	}
	b.Run("edges", func(b *testing.B) { sortCopy(b, unsorted, &g.occ) })
	b.Run("narrow", func(b *testing.B) { sortCopy(b, narrowEdges, &ng.occ) })
	b.Run("entries", func(b *testing.B) {
		es := slices.Clone(entries)
		run(b, len(es), func() {
			b.StopTimer()
			copy(es, entries)
			b.StartTimer()
			dedup.SortEntries(es)
		})
	})
}

package dedup

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/packed"
)

func mergeAll(runs []*packed.EdgeReader) ([]Entry, int64, error) {
	var out []Entry
	read, err := Merge(runs, func(es []Entry) error {
		if len(es) == 0 || len(es) > mergeBatch {
			return fmt.Errorf("Merge gave a batch of %d entries, want 1 to %d", len(es), mergeBatch)
		}
		out = append(out, es...)
		return nil
	})
	return out, read, err
}

func TestMergeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for iter := range 300 {
		k := rng.IntN(21)
		// One pool for all the runs: the same positions, and the same
		// entries, in several runs, as a merge meets them.
		pool := randPool(rng, 1+rng.IntN(200))
		var all []Entry
		var runs []*packed.EdgeReader
		for range k {
			n := rng.IntN(60)
			if rng.IntN(5) == 0 {
				n = 0
			}
			es := entriesFrom(rng, n, pool)
			SortEntries(es) // not compacted: duplicates within a run stay
			all = append(all, es...)
			runs = append(runs, readerOf(es))
		}
		got, read, err := mergeAll(runs)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if read != int64(len(all)) {
			t.Fatalf("iteration %d: read %d, want %d", iter, read, len(all))
		}
		if want := sortedCompact(all); !slices.Equal(got, want) {
			t.Fatalf("iteration %d (%d runs): merged %d entries, want %d", iter, k, len(got), len(want))
		}
	}
}

// TestMergeStretches merges runs that take turns in stretches, as a
// bucket's runs do (the same run wins many matches in a row): sorted
// entries, with repeats and twins (randPool), cut into pieces of 1 to
// 40, each piece to a run drawn at random, so that the same entry often
// ends one run's stretch and starts another's.
func TestMergeStretches(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 17))
	for iter := range 200 {
		k := 1 + rng.IntN(40)
		es := entriesFrom(rng, rng.IntN(3000), randPool(rng, 1+rng.IntN(300)))
		SortEntries(es)
		parts := make([][]Entry, k)
		for lo := 0; lo < len(es); {
			hi := min(len(es), lo+1+rng.IntN(40))
			r := rng.IntN(k)
			parts[r] = append(parts[r], es[lo:hi]...)
			lo = hi
		}
		var runs []*packed.EdgeReader
		for _, p := range parts {
			runs = append(runs, readerOf(p))
		}
		got, read, err := mergeAll(runs)
		if err != nil || read != int64(len(es)) {
			t.Fatalf("iteration %d: read %d of %d: %v", iter, read, len(es), err)
		}
		if want := sortedCompact(es); !slices.Equal(got, want) {
			t.Fatalf("iteration %d (%d runs): merged %d entries, want %d", iter, k, len(got), len(want))
		}
	}
}

func TestMergeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	sorted := func(n int) []Entry {
		es := randEntries(rng, n, 0)
		SortEntries(es)
		return es
	}
	a, b := sorted(100), sorted(100)
	// Two sorted runs one after the other: the second goes backwards.
	unsorted := append(encode(b[50:]), encode(b[:50])...)
	truncated := encode(b)
	truncated = truncated[:len(truncated)-3]
	corrupt := encode(b)
	corrupt[len(corrupt)/2] ^= 0x40
	boom := errors.New("boom")
	tests := []struct {
		name string
		runs func() []*packed.EdgeReader
		emit func([]Entry) error
		want error
	}{
		{"out of order", func() []*packed.EdgeReader {
			return []*packed.EdgeReader{readerOf(a), newReader(bytes.NewReader(unsorted))}
		}, nil, packed.ErrCorrupt}, // the reader refuses it
		{"truncated", func() []*packed.EdgeReader {
			return []*packed.EdgeReader{readerOf(a), newReader(bytes.NewReader(truncated))}
		}, nil, packed.ErrCorrupt},
		{"corrupt", func() []*packed.EdgeReader {
			return []*packed.EdgeReader{newReader(bytes.NewReader(corrupt)), readerOf(a)}
		}, nil, packed.ErrCorrupt},
		{"emit error", func() []*packed.EdgeReader { return []*packed.EdgeReader{readerOf(a), readerOf(b)} }, func([]Entry) error { return boom }, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emit := tt.emit
			if emit == nil {
				emit = func([]Entry) error { return nil }
			}
			_, err := Merge(tt.runs(), emit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Merge error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestMergeOneAndNone(t *testing.T) {
	if got, read, err := mergeAll(nil); err != nil || read != 0 || len(got) != 0 {
		t.Errorf("Merge(nil) = %v, %d, %v", got, read, err)
	}
	es := []Entry{{Ref: Ref{Blob: 0, Index: 1}}, {Ref: Ref{Blob: 0, Index: 1}}, {Ref: Ref{Blob: 0, Index: 2}}}
	got, read, err := mergeAll([]*packed.EdgeReader{readerOf(es)})
	if err != nil || read != 3 || !slices.Equal(got, es[1:]) {
		t.Errorf("Merge of one run = %v, %d, %v", got, read, err)
	}
}

// FuzzReader feeds arbitrary bytes, split into up to four runs, to the
// packed reader and Merge: they must never panic, and whatever Merge emits
// without error must be the sorted, duplicate-free union of what the runs
// hold.
func FuzzReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(19, 20))
	es := randEntries(rng, 6, 3)
	SortEntries(es)
	f.Add(byte(0), encode(es))
	f.Add(byte(1), append(encode(es[:3]), encode(es[3:])...))
	f.Add(byte(3), encode(es)[:20])
	f.Fuzz(func(t *testing.T, k byte, data []byte) {
		n := int(k%4) + 1
		var runs []*packed.EdgeReader
		var parts [][]byte
		for i := range n {
			part := data[len(data)*i/n : len(data)*(i+1)/n]
			parts = append(parts, part)
			runs = append(runs, newReader(bytes.NewReader(part)))
		}
		got, read, err := mergeAll(runs)
		var want []Entry
		valid := true // every part decodes and is sorted
		for _, part := range parts {
			pr := newReader(bytes.NewReader(part))
			es := readAll(pr)
			valid = valid && pr.Err() == nil && slices.IsSortedFunc(es, packed.CompareEdges)
			want = append(want, es...)
		}
		if valid != (err == nil) {
			t.Fatalf("runs valid and sorted: %v, but Merge error = %v", valid, err)
		}
		if err != nil {
			return
		}
		if read != int64(len(want)) {
			t.Fatalf("Merge read %d, the runs hold %d", read, len(want))
		}
		if want = sortedCompact(want); !slices.Equal(got, want) {
			t.Fatalf("Merge emitted %v, want %v", got, want)
		}
	})
}

// BenchmarkMerge merges k runs, decoding included: 16 and 128 runs of
// random entries, 128 about the expansion runs a bucket merge of 8x8 ply
// 12 reads (156); and the edges of ply 9 cut into 128 runs as expansion
// tasks of consecutive parents make them. Random entries take about 38
// bytes each packed, so decoding dominates their merge; real ones take a
// few, share positions (the merge drops their repeats) and leave the
// loser tree a larger share, as in a real bucket merge. 2,048 runs are
// as many levels of the tree as the 1,759 expansion runs a bucket merge
// of 8x8 ply 14 reads. Those runs' parents are consecutive in the order
// of their discovery, which scatters them; tasksPly10 cuts ply 9 in its
// sorted order, as a ply's final blobs are cut, into 536 runs, as many
// as a bucket merge of ply 13 reads. Its runs take turns about as a
// real merge's do: 43% of its entries come from the run of the entry
// before and 22% from the run of the two before (docs/performance.md has
// a real merge's shares).
func BenchmarkMerge(b *testing.B) {
	random := func(k int) func() [][]Entry {
		return func() [][]Entry {
			rng := rand.New(rand.NewPCG(21, 22))
			runs := make([][]Entry, k)
			for i := range runs {
				runs[i] = randEntries(rng, 1600000/k, 0)
			}
			return runs
		}
	}
	real := func(k int) func() [][]Entry {
		return func() [][]Entry {
			es := realEntries()
			runs := make([][]Entry, k)
			for i := range runs {
				runs[i] = slices.Clone(es[len(es)*i/k : len(es)*(i+1)/k])
			}
			return runs
		}
	}
	// tasks cuts ply 9, sorted, into k ranges of parents, as final blobs
	// are, and makes each range's children a run, as its expansion does:
	// the children of neighbouring parents are near each other, so that
	// runs take turns in stretches as in a real bucket merge.
	tasks := func(k int) func() [][]Entry {
		return func() [][]Entry {
			b := board.MustNew(8)
			parents := slices.SortedFunc(slices.Values(testkit.Ply(b, 9)), board.Compare)
			runs := make([][]Entry, k)
			var kids []board.Position
			for i := range runs {
				lo, hi := len(parents)*i/k, len(parents)*(i+1)/k
				for j, p := range parents[lo:hi] {
					kids, _ = b.Children(p, kids[:0])
					for _, c := range kids {
						runs[i] = append(runs[i], Entry{Pos: c, Ref: Ref{Blob: uint32(i), Index: uint32(j)}})
					}
				}
			}
			return runs
		}
	}
	inputs := []struct {
		name string
		runs func() [][]Entry // unsorted
	}{
		{"runs=16", random(16)},
		{"runs=128", random(128)},
		{"realPly9/runs=128", real(128)},
		{"realPly9/runs=2048", real(2048)},
		{"tasksPly10/runs=536", tasks(536)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			var blobs [][]byte
			var size, n int64
			for _, es := range in.runs() {
				SortEntries(es)
				blobs = append(blobs, encode(es))
				size += int64(len(blobs[len(blobs)-1]))
				n += int64(len(es))
			}
			b.SetBytes(size)
			for b.Loop() {
				runs := make([]*packed.EdgeReader, len(blobs))
				for i, blob := range blobs {
					runs[i] = newReader(bytes.NewReader(blob))
				}
				var sum uint64
				read, err := Merge(runs, func(es []Entry) error {
					for _, e := range es {
						sum += e.Pos.Occ
					}
					return nil
				})
				if err != nil || read != n {
					b.Fatal(read, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}

// BenchmarkReplay times the loser tree's replay alone, the chain of
// matches up the tree that each merged entry costs, without decoding:
// the winner's head takes the next of sorted random keys spread over
// the runs as a real bucket's are, a run chosen at random for each. 536
// runs are a bucket merge of 8x8 ply 13; 1,759 of ply 14.
func BenchmarkReplay(b *testing.B) {
	for _, k := range []int{536, 1759} {
		b.Run(fmt.Sprintf("runs=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			const n = 1 << 20
			keys := make([]key, n)
			for i := range keys {
				keys[i] = key{occ: rng.Uint64(), white: rng.Uint64()}
			}
			slices.SortFunc(keys, func(a, b key) int { return int(lessBits(b, a)) - int(lessBits(a, b)) })
			// Each run takes the keys dealt to it, in order.
			deal := make([][]key, k)
			for _, x := range keys {
				r := rng.IntN(k)
				deal[r] = append(deal[r], x)
			}
			m := merger{runs: make([]*packed.EdgeReader, k), head: make([]key, k), pre: make([]prefix, k), tree: make([]int, k)}
			next := make([]int, k)
			load := func(r int) {
				if next[r] == len(deal[r]) {
					m.exhaust(r)
					return
				}
				m.set(r, deal[r][next[r]])
				next[r]++
			}
			reset := func() {
				clear(next)
				for r := range k {
					load(r)
				}
				m.build()
			}
			reset()
			var last key
			for b.Loop() {
				w := m.tree[0]
				if m.head[w].side == exhausted {
					b.StopTimer()
					reset()
					b.StartTimer()
					w, last = m.tree[0], key{}
				}
				if lessBits(m.head[w], last) == 1 {
					b.Fatalf("the winner %x sorts before the one before it, %x", m.head[w], last)
				}
				last = m.head[w]
				load(w)
				m.replay(w)
			}
		})
	}
}

// TestClimb: climb, in assembly where there is some, plays the same
// matches as climbGeneric on random trees whose prefixes often tie,
// and stops at the same node.
func TestClimb(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 2, 3, 17, 536} {
		for range 2000 {
			pre := make([]prefix, k)
			for i := range pre {
				// Few values, so that equal prefixes are common.
				pre[i] = prefix{rng.Uint64N(3), rng.Uint64N(3)}
			}
			tree := make([]int, k)
			for i := range tree {
				tree[i] = rng.IntN(k)
			}
			w := rng.IntN(k)
			c := prefix{rng.Uint64N(3), rng.Uint64N(3)}
			n := uint(w+k) / 2
			tree2 := slices.Clone(tree)
			gw, gc, gstop := climb(tree, pre, w, c, n)
			ww, wc, wstop := climbGeneric(tree2, pre, w, c, n)
			if gw != ww || gc != wc || gstop != wstop || !slices.Equal(tree, tree2) {
				t.Fatalf("k %d: climb gives %d %v %d, tree %v; climbGeneric %d %v %d, tree %v", k, gw, gc, gstop, tree, ww, wc, wstop, tree2)
			}
		}
	}
}

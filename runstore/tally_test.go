package runstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

// keysOf is n made-up sample keys whose first byte is tag.
func keysOf(tag byte, n int) []byte {
	out := make([]byte, n*board.KeyLen)
	for k := range n {
		out[k*board.KeyLen] = tag
		out[k*board.KeyLen+1] = byte(k)
		out[k*board.KeyLen+2] = byte(k >> 8)
	}
	return out
}

// TestSampleKeys: parts whose keys fit keep them all, in order; parts
// over maxSamples keep at most that, each its share of the weight,
// evenly spaced from its first key.
func TestSampleKeys(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []weighed
		want  map[byte]int // keys kept by tag
	}{
		{"none", nil, map[byte]int{}},
		{"fit", []weighed{{keysOf(1, 10), 100}, {keysOf(2, 5), 1}}, map[byte]int{1: 10, 2: 5}},
		{"one part over", []weighed{{keysOf(1, 2*maxSamples), 7}}, map[byte]int{1: maxSamples}},
		{"shares by weight", []weighed{{keysOf(1, maxSamples), 3}, {keysOf(2, maxSamples), 1}},
			map[byte]int{1: maxSamples * 3 / 4, 2: maxSamples / 4}},
		{"a share past a part's keys", []weighed{{keysOf(1, 10), 9}, {keysOf(2, maxSamples), 1}},
			map[byte]int{1: 10, 2: maxSamples / 10}},
		{"no weight", []weighed{{keysOf(1, maxSamples), 0}, {keysOf(2, maxSamples), 5}}, map[byte]int{2: maxSamples}},
	} {
		out := sampleKeys(tc.parts, maxSamples)
		if len(out)%board.KeyLen != 0 || len(out)/board.KeyLen > maxSamples {
			t.Errorf("%s: %d bytes, not at most %d keys", tc.name, len(out), maxSamples)
		}
		got := map[byte]int{}
		for k := 0; k < len(out); k += board.KeyLen {
			got[out[k]]++
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: keys by part %v, want %v", tc.name, got, tc.want)
		}
		if len(tc.parts) > 0 && len(out) > 0 && !bytes.Equal(out[:board.KeyLen], tc.parts[0].keys[:board.KeyLen]) && tc.want[1] > 0 {
			t.Errorf("%s: the first key kept is not the first part's first", tc.name)
		}
	}
}

// TestTalliedTotals merges a ply of 300 buckets (a tree of three
// levels) with a random number of outputs each, in random order, each
// merge climbing the completion tree, and reads the ply's totals and
// every run of 64 final blobs: counted in trees of 8 and of 64, flat,
// and in a tree whose first bucket's marker was written before tallies
// (so no node above it has a tally, and the readers count from every
// marker). Each must give the same totals and the merged blobs in key
// order; a tree's samples come from the nodes of a level below its root,
// each keeping at most maxSamples, the others' are all of them.
func TestTalliedTotals(t *testing.T) {
	ctx := context.Background()
	b := board.MustNew(4)
	start := b.Canonical(b.Start())
	const buckets = 300
	rng := rand.New(rand.NewPCG(3, 9))
	outputs := make([]int, buckets)
	var want []string
	for k := range outputs {
		outputs[k] = rng.IntN(6)
		for j := range outputs[k] {
			want = append(want, FinalRunBlobName(1, k, j, "a"))
		}
	}
	order := rng.Perm(buckets)
	for _, tc := range []struct {
		name       string
		completion Completion
		shards     int
		old        bool // bucket 0's marker lacks the tally
	}{
		{"tree", TreeCompletion, 3, false},
		{"tree of 64", WideTreeCompletion, 3, false},
		{"flat", FlatCompletion, 1, false},
		{"tree, from before tallies", TreeCompletion, 1, true},
	} {
		setup := mergeSetup{be: teststore.Embedded(t), shards: tc.shards, completion: tc.completion, buckets: buckets, edges: 1234, order: order,
			merge: func(k int) BucketMerge {
				bm := BucketMerge{Bucket: k, Attempt: "a", Segments: 2, Entries: 10, Outputs: int64(outputs[k])}
				for j := range outputs[k] {
					bm.Merged = append(bm.Merged, &MergedBlob{Blob: FinalRunBlobName(1, k, j, "a"), Count: 100, Terminal: 1,
						Min: start, Max: start, Samples: keysOf(byte(k), 200)})
				}
				return bm
			}}
		if tc.old {
			setup.committed = func(s *Store, state storage.Table, k int) {
				if k != 0 {
					return
				}
				rows := s.bucketMarkers(1)
				e, err := state.Get(ctx, rows.pk(0), markerKey(rows.item, 0))
				if err != nil {
					t.Fatal(err)
				}
				delete(e.Props, "Positions")
				delete(e.Props, "Terminal")
				delete(e.Props, "Samples")
				if _, err := state.Update(ctx, e, e.ETag); err != nil {
					t.Fatal(err)
				}
			}
		}
		s, p, _ := mergedPly(t, setup)
		totals, samples, err := s.MergedTotals(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wantTotals := Totals{Finals: len(want), Positions: 100 * int64(len(want)), Terminal: int64(len(want)),
			Edges: 1234, Merges: buckets, BlobReads: 2 * buckets, Merged: 10 * buckets}
		if totals != wantTotals {
			t.Errorf("%s: totals %+v, want %+v", tc.name, totals, wantTotals)
		}
		// In a tree of 64 the root's five children keep at most
		// maxSamples each, of 64 buckets' 32,000 samples; in a tree of
		// 8 its five children have 38 below them, which the samples
		// come from, each keeping at most maxSamples of its 8 buckets'
		// (a node over more takes each child's share rounded down).
		keys := len(samples) / board.KeyLen
		below := 0
		for g := 0; g < buckets; g += 8 {
			n := 0
			for _, o := range outputs[g:min(buckets, g+8)] {
				n += 200 * o
			}
			below += min(n, maxSamples)
		}
		switch {
		case tc.old || tc.completion == FlatCompletion:
			if keys != 200*len(want) {
				t.Errorf("%s: %d samples, want every one of %d", tc.name, keys, 200*len(want))
			}
		case tc.completion == WideTreeCompletion:
			if keys > 5*maxSamples || keys < 4*maxSamples {
				t.Errorf("%s: %d samples, want at most %d and most of them", tc.name, keys, 5*maxSamples)
			}
		case keys > below || keys < below-8*38:
			t.Errorf("%s: %d samples, want the %d of the 38 nodes of level 1, less rounding", tc.name, keys, below)
		}
		p.Finals = totals.Finals
		var got []string
		for lo := 0; lo < p.Finals; lo += DispatchFan {
			finals, err := s.FinalsFor(ctx, p, Span{Lo: lo, Hi: min(p.Finals, lo+DispatchFan)})
			if err != nil {
				t.Fatalf("%s: final blobs from %d: %v", tc.name, lo, err)
			}
			for i, f := range finals {
				if f.Index != lo+i || f.Count != 100 {
					t.Errorf("%s: final blob %d read as %+v", tc.name, lo+i, f)
				}
				got = append(got, f.Blob)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: final blobs %d, want the %d merged blobs in key order", tc.name, len(got), len(want))
		}
		if _, err := s.FinalsFor(ctx, p, Span{Lo: p.Finals - 1, Hi: p.Finals + 1}); err == nil {
			t.Errorf("%s: final blobs past the last were read", tc.name)
		}
	}
}

// TestSamplesBelowFewNodes: a ply of 100 buckets has two nodes below its
// root, which keep at most maxSamples keys each; the splitters' samples
// then come from the 100 bucket markers themselves, every one of them.
func TestSamplesBelowFewNodes(t *testing.T) {
	ctx := context.Background()
	b := board.MustNew(4)
	start := b.Canonical(b.Start())
	const buckets = 100
	s, p, _ := mergedPly(t, mergeSetup{be: teststore.Embedded(t), shards: 3, buckets: buckets, edges: 1, order: rand.Perm(buckets),
		merge: func(k int) BucketMerge {
			return BucketMerge{Bucket: k, Attempt: "a", Outputs: 1, Merged: []*MergedBlob{{Blob: FinalRunBlobName(1, k, 0, "a"),
				Count: 100, Min: start, Max: start, Samples: keysOf(byte(k), 200)}}}
		}})
	_, samples, err := s.MergedTotals(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(samples)/board.KeyLen, 200*buckets; got != want || want <= 2*maxSamples {
		t.Errorf("%d samples, want every one of the %d (two nodes keep at most %d)", got, want, 2*maxSamples)
	}
}

// TestFinalsForReadsDown: FinalsFor finds a span's first bucket with one
// point read a level of the merge tree (each node keeps its children's
// outputs), so that reading a span costs those reads and the rows of the
// buckets it covers; and a tree whose nodes were added before they kept
// them (no OutputsEach) is read by its children, with the same result.
func TestFinalsForReadsDown(t *testing.T) {
	ctx := context.Background()
	start := board.MustNew(4).Start()
	const buckets = 300 // three levels
	rng := rand.New(rand.NewPCG(4, 2))
	outputs := make([]int, buckets)
	for k := range outputs {
		outputs[k] = 1 + rng.IntN(5)
	}
	var entities int
	be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
		err := next()
		if c.Op == storage.TableGet || c.Op == storage.TableQuery {
			entities += c.Items
		}
		return err
	})
	s, p, state := mergedPly(t, mergeSetup{be: be, shards: 3, buckets: buckets, edges: 1, order: rng.Perm(buckets),
		merge: func(k int) BucketMerge {
			bm := BucketMerge{Bucket: k, Attempt: "a", Outputs: int64(outputs[k])}
			for j := range outputs[k] {
				bm.Merged = append(bm.Merged, &MergedBlob{Blob: FinalRunBlobName(1, k, j, "a"), Count: 1, Min: start, Max: start})
			}
			return bm
		}})
	totals, _, err := s.MergedTotals(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p.Finals = totals.Finals
	read := func(limit bool) []string {
		var names []string
		first := 0 // the first final blob of bucket b
		b := 0
		for lo := 0; lo < p.Finals; lo += DispatchFan {
			hi := min(p.Finals, lo+DispatchFan)
			entities = 0
			finals, err := s.FinalsFor(ctx, p, Span{Lo: lo, Hi: hi})
			if err != nil {
				t.Fatalf("final blobs from %d: %v", lo, err)
			}
			for first+outputs[b] <= lo {
				first += outputs[b]
				b++
			}
			rows := 0 // the markers and output rows of the buckets that hold [lo, hi)
			for k, at := b, first; at < hi; k++ {
				rows += 1 + outputs[k]
				at += outputs[k]
			}
			// Past the end of its first bucket's group, a span reads
			// 1, 2, 4... buckets: at most twice the rows it needs.
			if want := 3 + 2*rows; limit && entities > want {
				t.Errorf("final blobs %d to %d: %d entities read, want at most %d (a point read a level and the rows of their buckets)", lo, hi, entities, want)
			}
			for _, f := range finals {
				names = append(names, f.Blob)
			}
		}
		return names
	}
	kept := read(true)
	if len(kept) != p.Finals {
		t.Fatalf("%d final blobs read, want %d", len(kept), p.Finals)
	}
	// Nodes added before they kept their children's outputs.
	rows := s.bucketMarkers(1)
	for _, pk := range rows.pks() {
		es, err := queryAll(ctx, s.state, pk, string(rows.group), string(rows.group+1))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			delete(e.Props, "OutputsEach")
			if _, err := state.Update(ctx, e, e.ETag); err != nil {
				t.Fatal(err)
			}
		}
	}
	if old := read(false); !slices.Equal(old, kept) {
		t.Errorf("without the kept outputs, %d final blobs read differently", len(old))
	}
}

// mergeSetup is a ply 1 of one expansion task (of edges edges) and
// buckets buckets, merged in order: merge(k) is bucket k's marker, and
// committed, when set, runs after its commit and before it climbs the
// completion tree.
type mergeSetup struct {
	be         storage.Backend
	shards     int
	completion Completion
	buckets    int
	edges      int64
	order      []int
	merge      func(k int) BucketMerge
	committed  func(s *Store, state storage.Table, k int)
}

// mergedPly opens a store on c.be and merges c's ply: the ply as read
// back, Merging and every bucket merged.
func mergedPly(t *testing.T, c mergeSetup) (*Store, *Ply, storage.Table) {
	t.Helper()
	ctx := context.Background()
	s, p, state := openPlyOne(t, c.be, c.shards, c.completion, Ply{Tasks: 1, Buckets: c.buckets})
	est := s.ExpansionStage(p)
	if _, err := est.Commit(ctx, Expansion{Task: 0, Blob: ExpansionBlobName(1, 0, "e"), Edges: c.edges}); err != nil {
		t.Fatal(err)
	}
	if all, err := est.AllDone(ctx, 0); err != nil || !all {
		t.Fatalf("the one expansion task: %v, %v", all, err)
	}
	if err := s.StartMerging(ctx, p, Claim{Owner: "m"}); err != nil {
		t.Fatal(err)
	}
	mst := s.MergeStage(p)
	for _, k := range c.order {
		if _, err := mst.Commit(ctx, c.merge(k)); err != nil {
			t.Fatal(err)
		}
		if c.committed != nil {
			c.committed(s, state, k)
		}
		if _, err := mst.AllDone(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Ply(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s, p, state
}

package runstore

import (
	"context"
	"errors"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
)

// TestDispatchLeaves: the leaves of a ply's dispatch cover each of its
// final blobs, buckets, expansion tasks and combine tasks, and its
// working blobs, exactly once and in order, at most DispatchFan units a
// leaf, and the back stage's leaves cover the previous ply's final blobs
// likewise; the stages have one item per leaf, and a leaf is the whole
// dispatch only when it is the only one.
func TestDispatchLeaves(t *testing.T) {
	s, _ := openStore(t)
	for _, p := range []*Ply{
		{Ply: 0, Tasks: 1, Buckets: 1, Totals: Totals{Finals: 1}},
		{Ply: 5, Tasks: 14, Buckets: 3, Totals: Totals{Finals: 40}},
		{Ply: 7, Tasks: 887, Buckets: 83, Levels: []CombineLevel{{30, 16}}, Totals: Totals{Finals: 5300}},
		{Ply: 18, Tasks: 1848689, Buckets: 8192, Levels: []CombineLevel{{28886, 16}, {452, 19}, {8, 1024}}, Totals: Totals{Finals: 12562785}},
	} {
		var next DispatchUnits // the first unit of each kind not yet covered
		working := 0
		leaves := s.DispatchStage(p).Items()
		for leaf := range leaves {
			u := p.DispatchLeaf(leaf)
			if u.Whole != (leaves == 1) {
				t.Errorf("ply %d leaf %d of %d: whole %v", p.Ply, leaf, leaves, u.Whole)
			}
			n := 0
			for _, c := range []struct {
				kind      string
				got, next *Span
				of        int
			}{
				{"final blob", &u.Finals, &next.Finals, p.Finals},
				{"bucket", &u.Buckets, &next.Buckets, p.Buckets},
				{"expansion task", &u.Expansions, &next.Expansions, p.Tasks},
				{"combine task", &u.Combines, &next.Combines, p.CombineTasks()},
			} {
				if c.got.Hi == c.got.Lo {
					continue
				}
				if c.got.Lo != c.next.Lo || c.got.Hi > c.of {
					t.Fatalf("ply %d leaf %d: %ss %d to %d; want from %d, within %d", p.Ply, leaf, c.kind, c.got.Lo, c.got.Hi-1, c.next.Lo, c.of)
				}
				c.next.Lo = c.got.Hi
				n += c.got.Hi - c.got.Lo
			}
			if u.Working {
				working++
				n++
			}
			if n == 0 || n > DispatchFan || (leaf < leaves-1 && n != DispatchFan) {
				t.Fatalf("ply %d leaf %d of %d covers %d units", p.Ply, leaf, leaves, n)
			}
		}
		if next.Finals.Lo != p.Finals || next.Buckets.Lo != p.Buckets || next.Expansions.Lo != p.Tasks || next.Combines.Lo != p.CombineTasks() || working != 1 {
			t.Errorf("ply %d: the leaves cover %+v and the working blobs %d times; want all of %+v, once", p.Ply, next, working, p)
		}
		back := s.BackStage(p).Items()
		at := 0
		for leaf := range back {
			sp := p.BackLeaf(leaf)
			if sp.Lo != at || sp.Hi <= sp.Lo || sp.Hi-sp.Lo > DispatchFan {
				t.Fatalf("ply %d back leaf %d: %+v, want from %d", p.Ply, leaf, sp, at)
			}
			at = sp.Hi
		}
		if p.Ply == 0 {
			if back != 0 {
				t.Errorf("ply 0 has %d back leaves, want none", back)
			}
			continue
		}
		if at != p.Tasks {
			t.Errorf("ply %d: the back leaves cover %d of the previous ply's %d final blobs", p.Ply, at, p.Tasks)
		}
	}
}

// TestFinalsIn: a span of final blob rows is read from the partitions
// that hold it, in index order, whatever the shards; a span with a row
// missing is refused.
func TestFinalsIn(t *testing.T) {
	ctx := context.Background()
	start := board.MustNew(4).Start()
	for _, shards := range []int{1, 3} {
		s, _, _ := openPlyOne(t, teststore.Embedded(t), shards, TreeCompletion, Ply{Tasks: 1, Buckets: 1})
		var finals []FinalBlob
		for i := range 200 {
			finals = append(finals, FinalBlob{Index: i, Blob: FinalRunBlobName(1, i/10, i%10, "a"), Count: 1, Min: start, Max: start})
		}
		if err := s.PutFinals(ctx, 1, finals[:190]); err != nil {
			t.Fatal(err)
		}
		for _, span := range []Span{{0, 64}, {64, 128}, {60, 70}, {5, 6}, {100, 190}} {
			got, err := s.FinalsIn(ctx, 1, span)
			if err != nil {
				t.Errorf("%d shards, %v: %v", shards, span, err)
				continue
			}
			for k, f := range got {
				if f.Index != span.Lo+k || f.Blob != finals[span.Lo+k].Blob {
					t.Errorf("%d shards, %v: row %d is final blob %d, %s", shards, span, k, f.Index, f.Blob)
				}
			}
			if len(got) != span.Hi-span.Lo {
				t.Errorf("%d shards, %v: %d rows", shards, span, len(got))
			}
		}
		if _, err := s.FinalsIn(ctx, 1, Span{180, 200}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%d shards: final blobs 180 to 200 with 190 to 200 missing: %v, want ErrMalformed", shards, err)
		}
	}
}

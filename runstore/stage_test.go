package runstore

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

// openPlyOne is a store of a 4x4 run over be, its rows spread over
// shards partitions and counted as completion says, with ply 0 Final
// and ply 1 recorded as next describes; state is its state table.
func openPlyOne(t *testing.T, be storage.Backend, shards int, completion Completion, next Ply) (s *Store, p *Ply, state storage.Table) {
	t.Helper()
	ctx := context.Background()
	state, back := be.Table("runstate"), be.Table("runback")
	for _, tb := range []storage.Table{state, back} {
		if err := tb.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s = New(board.MustNew(4), []storage.Table{state}, []storage.Table{back}, shards, completion)
	p0, err := s.AddFirstPly(ctx, Claim{Owner: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	next.Ply = 1
	if err := s.Finish(ctx, p0, Claim{Owner: "seed"}, Totals{Finals: 1, Positions: 1}, &next); err != nil {
		t.Fatal(err)
	}
	if p, err = s.Ply(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return s, p, state
}

// openShardedStore is a store of a 4x4 run with ply 1 recorded and
// merging: 2 buckets, its rows spread over shards partitions.
func openShardedStore(t *testing.T, shards int) (*Store, *Ply) {
	t.Helper()
	s, p, _ := openPlyOne(t, teststore.Embedded(t), shards, TreeCompletion, Ply{Tasks: 1, Buckets: 2})
	if err := s.StartMerging(context.Background(), p, Claim{Owner: "m"}); err != nil {
		t.Fatal(err)
	}
	return s, p
}

// TestMergeCommit walks one bucket through the merge stage's commit
// protocol, row by row: output rows without their attempt's marker are
// never read as outputs (Runs' winner filter), the first marker wins, a
// losing attempt's rows are dropped, and an attempt that commits again
// under the winning tag (a second seed) keeps its rows.
func TestMergeCommit(t *testing.T) {
	ctx := context.Background()
	start := board.MustNew(4).Start()
	outputs := func(n int) []*MergedBlob {
		out := make([]*MergedBlob, n)
		for k := range out {
			out[k] = &MergedBlob{Blob: fmt.Sprintf("blob%d", k), Count: 1, Min: start, Max: start}
		}
		return out
	}
	for _, shards := range []int{1, 3} {
		s, p := openShardedStore(t, shards)
		st := s.MergeStage(p)
		rows := func() []string {
			es, err := queryPartitions(ctx, s.state, s.runRows(1).pks(), runsFrom, runsTo)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range es {
				out = append(out, e.RowKey)
			}
			return out
		}
		for _, step := range []struct {
			name     string
			commit   func() (won bool, err error)
			wantWon  bool
			wantRows []string // every output row
			wantRuns []string // the committed ones
		}{
			{"a crash between the outputs and the marker", func() (bool, error) {
				return false, putMerged(ctx, st, BucketMerge{Bucket: 0, Attempt: "c", Merged: outputs(2)})
			}, false, []string{"s000000-c-0000", "s000000-c-0001"}, nil},
			{"the first commit", func() (bool, error) {
				return st.Commit(ctx, BucketMerge{Bucket: 0, Attempt: "a", Outputs: 1, Merged: outputs(1)})
			}, true, []string{"s000000-a-0000", "s000000-c-0000", "s000000-c-0001"}, []string{"s000000-a-0000"}},
			{"a second attempt loses and drops its rows", func() (bool, error) {
				return st.Commit(ctx, BucketMerge{Bucket: 0, Attempt: "b", Outputs: 3, Merged: outputs(3)})
			}, false, []string{"s000000-a-0000", "s000000-c-0000", "s000000-c-0001"}, []string{"s000000-a-0000"}},
			{"the winner again keeps its rows", func() (bool, error) {
				return st.Commit(ctx, BucketMerge{Bucket: 0, Attempt: "a", Outputs: 1, Merged: outputs(1)})
			}, false, []string{"s000000-a-0000", "s000000-c-0000", "s000000-c-0001"}, []string{"s000000-a-0000"}},
			{"a bucket without outputs", func() (bool, error) {
				return st.Commit(ctx, BucketMerge{Bucket: 1, Attempt: "d"})
			}, true, []string{"s000000-a-0000", "s000000-c-0000", "s000000-c-0001"}, []string{"s000000-a-0000"}},
		} {
			won, err := step.commit()
			if err != nil || won != step.wantWon {
				t.Fatalf("shards %d, %s: won %v, %v; want %v", shards, step.name, won, err, step.wantWon)
			}
			if got := rows(); !slices.Equal(got, step.wantRows) {
				t.Errorf("shards %d, %s: output rows %q, want %q", shards, step.name, got, step.wantRows)
			}
			runs, err := s.MergedBlobs(ctx, st.Ply())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.Key)
			}
			if !slices.Equal(got, step.wantRuns) {
				t.Errorf("shards %d, %s: Runs %q, want %q", shards, step.name, got, step.wantRuns)
			}
		}
		ms, err := st.Markers(ctx)
		if err != nil || len(ms) != 2 || ms[0].Attempt != "a" || ms[1].Attempt != "d" {
			t.Errorf("shards %d: markers %+v, %v; want buckets 0 and 1 by a and d", shards, ms, err)
		}
		if all, err := st.Complete(ctx); err != nil || all {
			t.Errorf("shards %d: complete %v, %v before any AllDone added the root marker", shards, all, err)
		}
		if all, err := st.AllDone(ctx, 1); err != nil || !all {
			t.Errorf("shards %d: AllDone %v, %v with both buckets merged", shards, all, err)
		}
	}
}

// TestStageCheck: each stage is worked on in its states only, and
// names its items by the ply record; a marker row is told from others.
func TestStageCheck(t *testing.T) {
	s, p := openShardedStore(t, 3)
	for _, tc := range []struct {
		name    string
		check   func(i int) (bool, error)
		i       int
		past    bool
		wantErr string
	}{
		{"expansion of a merging ply", s.ExpansionStage(p).Check, 0, true, ""},
		{"bucket of a merging ply", s.MergeStage(p).Check, 1, false, ""},
		{"bucket the ply lacks", s.MergeStage(p).Check, 2, false, "ply 1 has 2 buckets, not 3"},
		{"combine task of a ply without a combine level", s.CombineStage(p, 0).Check, 0, false, "ply 1 has 0 combine tasks, not 1"},
		{"resolution of a merging ply", s.ResolutionStage(p).Check, 0, false, "ply 1 is merging, not final, so it cannot be resolved"},
	} {
		past, err := tc.check(tc.i)
		var got string
		if err != nil {
			got = err.Error()
		}
		if past != tc.past || got != tc.wantErr {
			t.Errorf("%s: past %v, error %q; want %v, %q", tc.name, past, got, tc.past, tc.wantErr)
		}
	}
	ctx := context.Background()
	start := board.MustNew(4).Start()
	if _, err := s.MergeStage(p).Commit(ctx, BucketMerge{Bucket: 1, Attempt: "a", Merged: []*MergedBlob{{Blob: "b", Min: start, Max: start}}}); err != nil {
		t.Fatal(err)
	}
	es, err := queryPartitions(ctx, s.state, s.runRows(1).all(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if i, ok := s.MergeStage(p).MarkerOf(e); ok {
			got = append(got, fmt.Sprintf("bucket %d", i))
		}
		if _, ok := s.ExpansionStage(p).MarkerOf(e); ok {
			got = append(got, "an expansion marker")
		}
	}
	if want := []string{"bucket 1"}; !slices.Equal(got, want) {
		t.Errorf("MarkerOf found %q among %d rows, want %q", got, len(es), want)
	}
}

// TestProgressBounded: a stage's progress is counted from a read that
// does not grow with the stage (in a tree, a level's children at most,
// from the root down; flat, a bisection, a page of group markers and one
// group's items), and is exact when its items complete in order and when
// all are done; a later group done first is counted (in a tree, where a
// sampled span reads it, at the share of its span: within a sixteenth of
// the stage).
func TestProgressBounded(t *testing.T) {
	ctx := context.Background()
	// ahead is a group done ahead of the others, whose node is a child
	// of one on the way down to the first not complete, so that the
	// walk down counts it: in a tree of 8, a group under the same node
	// of 64 items as item 1000 (one further ahead is counted from the
	// samples only); of 64, group 30.
	for _, c := range []struct {
		n     int
		flat  Completion
		ahead int
	}{
		{3000, TreeCompletion, 1016}, {12000, TreeCompletion, 1016}, {300000, TreeCompletion, 1016},
		{3000, WideTreeCompletion, 1920}, {12000, WideTreeCompletion, 1920},
		{3000, FlatCompletion, 1920}, {12000, FlatCompletion, 1920},
	} {
		n := c.n
		var reads int
		be := storage.Wrap(teststore.Embedded(t), func(c *storage.Call, next func() error) error {
			err := next()
			switch c.Op {
			case storage.TableGet:
				reads++
			case storage.TableQuery:
				reads += max(1, c.Items) // a query that returns nothing is still a read
			}
			return err
		})
		s, p, _ := openPlyOne(t, be, 1, c.flat, Ply{Tasks: n, Buckets: 1})
		st := s.ExpansionStage(p)
		done := func(items Span) {
			for i := items.Lo; i < items.Hi; i++ {
				if _, err := st.Commit(ctx, Expansion{Task: i}); err != nil {
					t.Fatal(err)
				}
				if _, err := st.AllDone(ctx, i); err != nil {
					t.Fatal(err)
				}
			}
		}
		check := func(want, slack int) {
			reads = 0
			got, err := st.Progress(ctx)
			if err != nil || got < want || got > want+slack {
				t.Errorf("%d items: progress %d, %v; want %d to %d", n, got, err, want, want+slack)
			}
			// A tree: the root, then a level's children at most (at
			// most 4 levels of 64 or 7 of 8 here), and the sampled
			// spans; flat: a bisection of the groups, a page past, the
			// first incomplete group's items.
			if limit := 1 + 4*64 + progressSamples*spreadGroup; reads > limit {
				t.Errorf("%d items: progress read %d rows, more than %d", n, reads, limit)
			}
		}
		check(0, 0)
		done(Span{0, 1000})
		check(1000, 0)
		fan, slack := c.flat.Fan(), 0
		if c.flat != FlatCompletion {
			slack = n / 16
		}
		done(Span{c.ahead, c.ahead + fan})
		check(1000+fan, slack)
		done(Span{1000, 3000})
		check(3000, 0) // every item, when n is 3000
	}
}

// TestProgressOutOfOrder: items done out of order leave most nodes
// incomplete; Progress still counts about the share done, from a span
// of 64 items in each eighth of the stage, within a sixteenth of the
// stage at every reading, whether the items are done at random or as a
// front, in about the order a sharded queue hands them out. Spans at
// fixed places, dropped once the items before them were all done,
// counted a front 12% short just after it passed one and 10% over just
// before: the progress line fell back by a tenth of the stage.
func TestProgressOutOfOrder(t *testing.T) {
	ctx := context.Background()
	const n = 10896
	for _, c := range []struct {
		name string
		at   func(i int, rng *rand.Rand) float64 // when item i is done
	}{
		{"random", func(int, *rand.Rand) float64 { return 0 }},
		{"front", func(i int, rng *rand.Rand) float64 { return float64(i) + rng.NormFloat64()*n/20 }},
		{"sharp front", func(i int, rng *rand.Rand) float64 { return float64(i) + rng.NormFloat64()*n/400 }},
	} {
		s, p, _ := openPlyOne(t, teststore.Embedded(t), 56, TreeCompletion, Ply{Tasks: n, Buckets: 1})
		st := s.ExpansionStage(p)
		rng := rand.New(rand.NewPCG(5, 7))
		order := rng.Perm(n)
		when := make([]float64, n)
		for i := range when {
			when[i] = c.at(i, rng)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(when[a], when[b]) })
		worst := 0
		for at, i := range order {
			if _, err := st.Commit(ctx, Expansion{Task: i}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AllDone(ctx, i); err != nil {
				t.Fatal(err)
			}
			if at%250 != 0 {
				continue
			}
			got, err := st.Progress(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if off := got - (at + 1); abs(off) > abs(worst) {
				worst = off
			}
		}
		t.Logf("%s: off by %d items at most", c.name, worst)
		if abs(worst) > n/16 {
			t.Errorf("%d items done %s: progress off by %d at one reading, more than %d", n, c.name, worst, n/16)
		}
	}
}

func abs(x int) int { return max(x, -x) }

// TestMarkersQueryTheirPartitions: reading the markers of a span asks
// only the partitions that hold its items (a group of spreadGroup
// items is one), so that a few items cost one query on a run of many
// shards; and every marker of the span is found, whatever the shards.
func TestMarkersQueryTheirPartitions(t *testing.T) {
	ctx := context.Background()
	const n = 10 * spreadGroup
	for _, c := range []struct {
		shards int
		span   Span
		want   int // queries
	}{
		{56, Span{0, 1}, 1},
		{56, Span{70, 71}, 1},
		{56, Span{64, 128}, 1},
		{56, Span{60, 70}, 2},
		{56, Span{0, n}, 10},
		{3, Span{0, n}, 3},
		{3, Span{0, 2 * spreadGroup}, 2},
		{1, Span{100, 400}, 1},
		{56, Span{5, 5}, 0},
	} {
		var queries int
		be := storage.Wrap(teststore.Embedded(t), func(call *storage.Call, next func() error) error {
			if call.Op == storage.TableQuery {
				queries++
			}
			return next()
		})
		s, p, _ := openPlyOne(t, be, c.shards, TreeCompletion, Ply{Tasks: n, Buckets: 1})
		st := s.ExpansionStage(p)
		for i := 0; i < n; i += 3 {
			if _, err := st.Commit(ctx, Expansion{Task: i}); err != nil {
				t.Fatal(err)
			}
		}
		queries = 0
		got, err := st.MarkersIn(ctx, c.span)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for i := c.span.Lo; i < c.span.Hi; i++ {
			if i%3 == 0 {
				want = append(want, i)
			}
		}
		var idx []int
		for _, m := range got {
			idx = append(idx, m.Task)
		}
		if !slices.Equal(idx, want) || queries != c.want {
			t.Errorf("%d shards, items %v: markers %v in %d queries; want %v in %d", c.shards, c.span, idx, queries, want, c.want)
		}
	}
}

package runstore

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestCompletionConcurrent finishes n items from many goroutines at once,
// then delivers again one item in seven and any that saw the stage
// complete: none may see the stage complete
// before every item is, and, counted in a tree, exactly one item sees
// it (its redelivery too, and no other's); counted flat, at least one.
// With the markers in one partition and spread over three, in trees of
// both fan-outs and flat.
func TestCompletionConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, completion := range []Completion{TreeCompletion, WideTreeCompletion, FlatCompletion} {
		for _, c := range []struct{ n, shards int }{{1, 1}, {64, 1}, {65, 1}, {200, 1}, {1, 3}, {65, 3}, {300, 3}, {4097, 3}} {
			n := c.n
			s, _ := openStore(t)
			s.completion, s.shards = completion, c.shards
			m := s.resolutionMarkers(1)
			var mu sync.Mutex
			saw := map[int]int{} // deliveries that saw the stage complete, by item
			deliver := func(i int) {
				all, err := s.itemDone(ctx, m, i, n)
				if err != nil {
					t.Error(err)
				}
				if all {
					// Markers are only added: every one must be there now.
					es, err := queryPartitions(ctx, s.state, m.pks(), markerKey(m.item, 0), markerKey(m.item, n))
					if err != nil || len(es) != n {
						t.Errorf("%s n=%d: complete with %d of the markers (%v)", completion, n, len(es), err)
					}
					mu.Lock()
					saw[i]++
					mu.Unlock()
				}
			}
			var wg sync.WaitGroup
			for _, i := range rand.Perm(n) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := addMarker(ctx, s, m, i); err != nil {
						t.Error(err)
						return
					}
					deliver(i)
				}()
			}
			wg.Wait()
			first := len(saw)
			for i := range n {
				if i%7 == 0 || saw[i] > 0 {
					deliver(i)
				}
			}
			switch {
			case first == 0:
				t.Errorf("%s n=%d: no item saw the stage complete", completion, n)
			case completion != FlatCompletion && (first != 1 || len(saw) != 1):
				t.Errorf("%s n=%d: %d items saw the stage complete, %d with redeliveries; want 1 (%v)", completion, n, first, len(saw), saw)
			case completion != FlatCompletion && len(saw) == 1:
				for _, k := range saw {
					if k != 2 {
						t.Errorf("%s n=%d: the completing item saw it %d times in two deliveries", completion, n, k)
					}
				}
			}
			if all, err := s.allDone(ctx, m, n); err != nil || !all {
				t.Errorf("%s n=%d: allDone = %v, %v", completion, n, all, err)
			}
		}
	}
}

func addMarker(ctx context.Context, s *Store, m stageMarkers, i int) error {
	_, err := s.state(m.pk(i)).Add(ctx, storage.Entity{PartitionKey: m.pk(i), RowKey: markerKey(m.item, i), Props: map[string]any{}})
	return err
}

// readsKey carries the counter of the entities one completion check
// reads.
type readsKey struct{}

// callsKey carries the counter of the table calls (transactions) one
// completion check makes.
type callsKey struct{}

// countReads counts, for the calls whose context carries a counter, the
// table entities they return: a query's page, a Get's one; and the calls
// themselves.
func countReads(c *storage.Call, next func() error) error {
	err := next()
	if calls, _ := c.Ctx.Value(callsKey{}).(*atomic.Int64); calls != nil {
		calls.Add(1)
	}
	n, _ := c.Ctx.Value(readsKey{}).(*atomic.Int64)
	switch {
	case n == nil || err != nil:
	case c.Op == storage.TableQuery:
		n.Add(int64(c.Items))
	case c.Op == storage.TableGet:
		n.Add(1)
	}
	return err
}

// TestCompletionMillion counts a stage of a million items in a tree,
// with its markers spread over three partitions, and bounds the entities
// that one item's completion check reads: at most a fan-out and one
// more a level (the siblings, then the parent's marker when another
// item added it), 7 levels of 8 or 4 of 64 here, where counting flat
// would read up to 15,625 group markers from one partition per check.
//
// To stay quick, every item's marker is written first in batches, and
// then one item of each group, picked at random and in random order,
// runs its check, from 8 goroutines at once; for one group in eight a
// second item runs its check too, racing the first for the group's
// marker. Every check above level 0 thus runs as in a real stage, with
// siblings missing, out of order and concurrently; checks whose own
// group is unfinished (stopping at level 0, after one query) are
// TestCompletionConcurrent's. Exactly one check must see the stage
// complete, and only the last level's.
func TestCompletionMillion(t *testing.T) {
	for _, tc := range []struct {
		completion Completion
		levels     int
	}{{TreeCompletion, 7}, {WideTreeCompletion, 4}} {
		t.Run(string(tc.completion), func(t *testing.T) { completeMillion(t, tc.completion, tc.levels) })
	}
}

func completeMillion(t *testing.T, completion Completion, levels int) {
	const n, shards = 1_000_000, 3
	ctx := context.Background()
	be := teststore.Embedded(t)
	state := storage.Wrap(be, countReads).Table("runstate")
	if err := state.Create(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(board.MustNew(4), []storage.Table{state}, []storage.Table{state}, shards, completion)
	m := s.resolutionMarkers(18)
	fan := m.fan
	if m.nodes(n, levels) != 1 || m.nodes(n, levels-1) == 1 {
		t.Fatalf("a million items are not %d levels of %d", levels, fan)
	}
	for lo := 0; lo < n; lo += storage.MaxBatchOps {
		// A batch of 100 from a multiple of 100 lies in one group of
		// spreadGroup or two: one transaction a partition.
		ops := map[string][]storage.Op{}
		for i := lo; i < lo+storage.MaxBatchOps; i++ {
			ops[m.pk(i)] = append(ops[m.pk(i)], storage.Op{Kind: storage.OpUpsert, Entity: storage.Entity{PartitionKey: m.pk(i), RowKey: markerKey(m.item, i), Props: map[string]any{}}})
		}
		for pk, ops := range ops {
			if _, err := state.Transact(ctx, pk, ops); err != nil {
				t.Fatal(err)
			}
		}
	}
	if all, err := s.allDone(ctx, m, n); err != nil || all {
		t.Fatalf("complete before any check: %v, %v", all, err)
	}
	var checks []int
	for g := range m.nodes(n, 1) {
		size := min(fan, n-g*fan)
		checks = append(checks, g*fan+rand.IntN(size))
		if g%8 == 0 {
			checks = append(checks, g*fan+rand.IntN(size))
		}
	}
	rand.Shuffle(len(checks), func(a, b int) { checks[a], checks[b] = checks[b], checks[a] })
	var mu sync.Mutex
	var maxReads, completeReads int64
	complete, completer := 0, 0
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var reads atomic.Int64
				all, err := s.itemDone(context.WithValue(ctx, readsKey{}, &reads), m, i, n)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				maxReads = max(maxReads, reads.Load())
				if all {
					complete++
					completeReads, completer = reads.Load(), i
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range checks {
		next <- i
	}
	close(next)
	wg.Wait()
	// The check that completes the stage reads every child of each node
	// on its path, and at most one more row a level.
	bound, path := int64(levels*(fan+1)), int64(0)
	for level, j := 1, completer; level <= levels; level, j = level+1, j/fan {
		parent := j / fan
		path += int64(min(m.nodes(n, level-1), (parent+1)*fan) - parent*fan)
	}
	t.Logf("%d checks of a million items: at most %d entities read by one (bound %d), %d by the one that completed the stage (its path %d)",
		len(checks), maxReads, bound, completeReads, path)
	if maxReads > bound {
		t.Errorf("a check read %d entities, more than %d", maxReads, bound)
	}
	if complete != 1 || completeReads < path || completeReads > path+int64(levels) {
		t.Errorf("%d checks saw the stage complete, the last after reading %d entities; want 1, after %d to %d", complete, completeReads, path, path+int64(levels))
	}
	if all, err := s.allDone(ctx, m, n); err != nil || !all {
		t.Errorf("allDone = %v, %v", all, err)
	}
}

// TestCompletionInOrder finishes the items of a stage one after another,
// in the order they were sent (as a stage's items mostly finish), in
// reverse, and shuffled within windows of 256 (as hundreds of workers
// finish them): the checks read a few rows an item in all, where
// reading every sibling would read half a group an item, or more. Then
// in a burst, every item committed before any checks (as a small
// stage's items, all handed out at once, finish): each check then finds
// no sibling missing and reads its whole group, 8 rows or 64. No check
// reads more than its group and one more row a level, and exactly one
// sees the stage complete.
func TestCompletionInOrder(t *testing.T) {
	const n = 64*64 + 17
	for _, tc := range []struct {
		completion Completion
		// The most rows read and table calls made an item, in all: in
		// order, in reverse, shuffled, in a burst. A tree of 8 reads a
		// run of siblings in one page, so it makes fewer calls than one
		// of 64 but in order.
		rows, calls [4]float64
	}{
		{TreeCompletion, [4]float64{1.2, 5.5, 4.0, 10}, [4]float64{1.4, 2.4, 1.7, 4.2}},
		{WideTreeCompletion, [4]float64{1.1, 4.5, 6.5, 66}, [4]float64{1.2, 2.3, 2.1, 11}},
	} {
		t.Run(string(tc.completion), func(t *testing.T) { completeInOrder(t, tc.completion, n, tc.rows, tc.calls) })
	}
}

func completeInOrder(t *testing.T, completion Completion, n int, perItem, callsPerItem [4]float64) {
	ctx := context.Background()
	fan := completion.Fan()
	shuffled := make([]int, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for lo := 0; lo < n; lo += 256 {
		hi := min(n, lo+256)
		for k, i := range rng.Perm(hi - lo) {
			shuffled[lo+k] = lo + i
		}
	}
	for o, order := range []struct {
		name  string
		order func(k int) int
		burst bool
	}{
		{"in order", func(k int) int { return k }, false},
		{"in reverse", func(k int) int { return n - 1 - k }, false},
		{"shuffled", func(k int) int { return shuffled[k] }, false},
		{"in a burst", func(k int) int { return k }, true},
	} {
		be := teststore.Embedded(t)
		state := storage.Wrap(be, countReads).Table("runstate")
		if err := state.Create(ctx); err != nil {
			t.Fatal(err)
		}
		s := New(board.MustNew(4), []storage.Table{state}, []storage.Table{state}, 3, completion)
		m := s.resolutionMarkers(1)
		levels := int64(m.rootLevel(n))
		var total, calls atomic.Int64
		complete := 0
		if order.burst {
			for i := range n {
				if err := addMarker(ctx, s, m, i); err != nil {
					t.Fatal(err)
				}
			}
		}
		for k := range n {
			i := order.order(k)
			if !order.burst {
				if err := addMarker(ctx, s, m, i); err != nil {
					t.Fatal(err)
				}
			}
			var reads atomic.Int64
			all, err := s.itemDone(context.WithValue(context.WithValue(ctx, readsKey{}, &reads), callsKey{}, &calls), m, i, n)
			if err != nil {
				t.Fatal(err)
			}
			if all {
				complete++
			}
			if bound := levels * int64(fan+1); reads.Load() > bound {
				t.Errorf("%s: item %d's check read %d rows, more than %d", order.name, i, reads.Load(), bound)
			}
			total.Add(reads.Load())
		}
		got, gotCalls := float64(total.Load())/float64(n), float64(calls.Load())/float64(n)
		t.Logf("%s: %d items, %d rows read, %.2f an item, in %.2f table calls an item", order.name, n, total.Load(), got, gotCalls)
		if gotCalls > callsPerItem[o] {
			t.Errorf("%s: the checks made %.2f table calls an item, want at most %g", order.name, gotCalls, callsPerItem[o])
		}
		if complete != 1 {
			t.Errorf("%s: %d checks saw the stage complete, want 1", order.name, complete)
		}
		if got > perItem[o] {
			t.Errorf("%s: the checks read %.2f rows an item, want at most %g", order.name, got, perItem[o])
		}
	}
}

// shortPages is a table whose pages end early, as Azure's may: after
// one row; or, first, with no row at all and a token of its own, which
// the next query must bring back (asking again without it is an error,
// since the service could end the page there again).
type shortPages struct {
	storage.Table
	t      *testing.T
	empty  bool
	mu     sync.Mutex
	issued map[string]bool // the queries given an empty page and a token
}

// emptyToken is the token of shortPages' empty pages.
const emptyToken = "empty page"

func (s *shortPages) Query(ctx context.Context, pk string, opts storage.QueryOptions) (storage.Page, error) {
	opts.Limit = 1
	if !s.empty {
		return s.Table.Query(ctx, pk, opts)
	}
	key := pk + "|" + opts.From + "|" + opts.To
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case opts.Continuation == emptyToken:
		opts.Continuation = ""
		delete(s.issued, key)
	case opts.Continuation != "":
	case s.issued[key]:
		s.t.Errorf("query of [%q, %q) again without the token of its empty page", opts.From, opts.To)
		delete(s.issued, key)
	default:
		s.issued[key] = true
		return storage.Page{Next: emptyToken}, nil
	}
	return s.Table.Query(ctx, pk, opts)
}

// TestCompletionShortPages finishes a stage whose table ends every page
// early: the checks page on, with the service's token, and see the
// stage complete exactly once, and only once every item is done.
func TestCompletionShortPages(t *testing.T) {
	ctx := context.Background()
	const n = 3*64 + 5
	for _, empty := range []bool{false, true} {
		state := &shortPages{Table: teststore.Embedded(t).Table("runstate"), t: t, empty: empty, issued: map[string]bool{}}
		if err := state.Create(ctx); err != nil {
			t.Fatal(err)
		}
		s := New(board.MustNew(4), []storage.Table{state}, []storage.Table{state}, 2, TreeCompletion)
		m := s.resolutionMarkers(1)
		complete := 0
		for k, i := range rand.New(rand.NewPCG(3, 4)).Perm(n) {
			if err := addMarker(ctx, s, m, i); err != nil {
				t.Fatal(err)
			}
			all, err := s.itemDone(ctx, m, i, n)
			if err != nil {
				t.Fatal(err)
			}
			if all {
				complete++
				if k != n-1 {
					t.Errorf("empty pages %v: complete after %d of %d items", empty, k+1, n)
				}
			}
		}
		if complete != 1 {
			t.Errorf("empty pages %v: %d checks saw the stage complete, want 1", empty, complete)
		}
	}
}

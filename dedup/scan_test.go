package dedup

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// TestTreeChildren checks the tree through which a step starts: from
// node 0, every node of n is reached exactly once, no node has more than
// partFan children, and the depth is the fewest levels of partFan that
// hold n.
func TestTreeChildren(t *testing.T) {
	for _, n := range []int{1, 2, partFan, partFan + 1, partFan + 2, partFan * partFan, partFan*partFan + partFan + 2, 300_000} {
		parent := make([]int, n)
		for i := range parent {
			parent[i] = -1
		}
		depth, level := 0, []int{0}
		reached := 1
		for len(level) > 0 {
			var next []int
			for _, k := range level {
				kids := treeChildren(k, n)
				if len(kids) > partFan {
					t.Fatalf("n %d: node %d has %d children", n, k, len(kids))
				}
				for _, c := range kids {
					if c <= 0 || c >= n || parent[c] >= 0 {
						t.Fatalf("n %d: node %d lists child %d (parent already %d)", n, k, c, parent[max(0, min(c, n-1))])
					}
					parent[c] = k
				}
				reached += len(kids)
				next = append(next, kids...)
			}
			if len(next) > 0 {
				depth++
			}
			level = next
		}
		if reached != n {
			t.Errorf("n %d: %d nodes reached", n, reached)
		}
		// Levels 0..d hold 1 + partFan + ... + partFan^d nodes.
		want, hold := 0, 1
		for size := partFan; hold < n; size *= partFan {
			hold += size
			want++
		}
		if depth != want {
			t.Errorf("n %d: depth %d, want %d", n, depth, want)
		}
	}
}

// TestLargePartsStartThroughATree: a combine group and a range of
// bucket merges of more tasks than one handling starts (150, where the
// first starts up to partFan+1 alone) start through their trees: the
// part's first task enqueues up to partFan of its tasks (and itself
// again, in a part past the first), each of those its own children in
// the tree as it works, and together they enqueue every other task of
// the part once.
func TestLargePartsStartThroughATree(t *testing.T) {
	const n = 150
	origin := message.StandardOrigin(board.MustNew(8))
	for _, tc := range []struct {
		name  string
		setUp func(t *testing.T) (*mergingPly, []int)
		start func(m *mergingPly, i int) error
	}{
		{"combine", func(t *testing.T) (*mergingPly, []int) {
			m := newMergingPly(t, 12, n, 3, n) // group 1 of 3, n ranges
			m.expansions()
			return m, seq(m.ply.CombineIndex(0, n), m.ply.CombineIndex(0, 2*n))
		}, func(m *mergingPly, i int) error {
			_, _, err := combineTask(m.ctx, m.task, m.ply, i)
			return err
		}},
		{"merge", func(t *testing.T) (*mergingPly, []int) {
			m := newMergingPly(t, 12, 2*n, 3, 2) // range 1 of 2, n buckets
			m.combines()
			span := runstore.SpanOf(1, m.ply.Buckets, 2)
			return m, seq(span.Lo, span.Hi)
		}, func(m *mergingPly, i int) error {
			_, err := bucketInputs(m.ctx, m.task, m.ply, i)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, part := tc.setUp(t)
			enqueued := map[int]int{}
			// Each task of the part in turn; the messages each enqueued.
			// What a task does after starting its share (its merge) is
			// not this test's: its error is ignored.
			for k, i := range part {
				err := tc.start(m, i)
				if k == 0 && !errors.Is(err, task.ErrRequeued) {
					t.Fatalf("the part's first task: %v, want it sent again after its share", err)
				}
				var got []int
				for {
					msgs, err := m.task.Run.Work.Dequeue(m.ctx, 32, time.Minute)
					if err != nil {
						t.Fatal(err)
					}
					if len(msgs) == 0 {
						break
					}
					for _, msg := range msgs {
						mm, err := message.ParseMessage(origin, msg.Text)
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, mm.Index)
						if err := m.task.Run.Work.Delete(m.ctx, msg.ID, msg.PopReceipt); err != nil {
							t.Fatal(err)
						}
					}
				}
				if k == 0 {
					if !slices.Contains(got, i) {
						t.Errorf("the part's first task did not send itself again: %v", got)
					}
					got = slices.DeleteFunc(got, func(j int) bool { return j == i })
				}
				if len(got) > partFan {
					t.Errorf("task %d of the part enqueued %d tasks, more than %d", k, len(got), partFan)
				}
				for _, j := range got {
					enqueued[j]++
				}
			}
			for _, i := range part[1:] {
				if enqueued[i] != 1 {
					t.Errorf("task %d was enqueued %d times, want once", i, enqueued[i])
				}
			}
			if len(enqueued) != len(part)-1 {
				t.Errorf("%d tasks enqueued, want the part's other %d", len(enqueued), len(part)-1)
			}
		})
	}
}

// TestScanNodes: a scan of a step under way (a nudge of a stalled run)
// enqueues every task of it not done, once, and no task done, through a
// tree of scan nodes in which no handling enqueues more than scanSpan
// tasks and partFan scans, nor reads more markers than its span's and
// the few it checks first, however many tasks the step has. A step not
// under way is left to its first task; a run of the earlier forms gets
// the whole step from node 0.
func TestScanNodes(t *testing.T) {
	const n = 450 // tasks of the step: 8 nodes, two levels of the tree
	for _, tc := range []struct {
		name string
		// setUp makes the ply and returns the step's tasks' message
		// indexes and which of them are done.
		setUp   func(t *testing.T) (*mergingPly, []int, map[int]bool)
		kind    message.Kind
		forms   runstore.Messages
		inputs  bool // the scan writes the ply's inputs blob
		started bool // the step is under way: a task of its first part is done
	}{
		{name: "combine level", kind: message.KindCombine, forms: runstore.MessagesScanNodes, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 3, n/3)
			return m, seq(0, n), m.combinesDone(everyThird(n))
		}},
		{name: "combine level not started", kind: message.KindCombine, forms: runstore.MessagesScanNodes, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 3, n/3)
			return m, seq(0, n), m.combinesDone([]int{n/3 + 1, n - 1}) // none of the first group's
		}},
		{name: "combine level started, its task 0 lost", kind: message.KindCombine, forms: runstore.MessagesScanNodes, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 3, n/3)
			return m, seq(0, n), m.combinesDone([]int{5, 7})
		}},
		{name: "bucket merges", kind: message.KindMerge, forms: runstore.MessagesScanNodes, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 3, 2)
			m.combines()
			// The level's completion markers, as its last task claims them.
			st := m.task.Run.Store.CombineStage(m.ply, 0)
			for i := range st.Items() {
				if _, err := st.AllDone(m.ctx, i); err != nil {
					t.Fatal(err)
				}
			}
			return m, seq(0, n), m.mergesDone(everyThird(n))
		}},
		{name: "bucket merges without levels", kind: message.KindMerge, forms: runstore.MessagesScanNodes, inputs: true, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 0, 0)
			m.expansions()
			return m, seq(0, n), map[int]bool{}
		}},
		{name: "bucket merges without levels, under way", kind: message.KindMerge, forms: runstore.MessagesScanNodes, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 0, 0)
			m.expansions()
			return m, seq(0, n), m.mergesDone(everyThird(n))
		}},
		{name: "earlier forms", kind: message.KindCombine, forms: runstore.MessagesNamed, started: true, setUp: func(t *testing.T) (*mergingPly, []int, map[int]bool) {
			m := newMergingPly(t, 12, n, 3, n/3)
			return m, seq(0, n), m.combinesDone(everyThird(n))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, items, done := tc.setUp(t)
			m.task.Run.Messages = tc.forms
			enqueued := map[int]int{}
			scans := []message.Message{{Kind: message.KindScan, Ply: 1}}
			handlings := 0
			for len(scans) > 0 {
				s := scans[0]
				scans = scans[1:]
				m.reads.reset()
				if err := scan(m.ctx, m.task, s); err != nil {
					t.Fatalf("scan node %d: %v", s.Index, err)
				}
				handlings++
				entities, _ := m.reads.reset()
				var tasks, nodes int
				for _, msg := range m.drain() {
					switch msg.Kind {
					case message.KindScan:
						nodes++
						scans = append(scans, msg)
					case tc.kind:
						tasks++
						enqueued[msg.Index]++
					default:
						t.Fatalf("scan node %d enqueued %s", s.Index, msg.Format())
					}
				}
				if tc.forms < runstore.MessagesScanNodes {
					if nodes > 0 {
						t.Fatalf("a scan of a run of the earlier forms enqueued %d scans", nodes)
					}
					continue
				}
				// Its span's markers, each once; for a node other than 0,
				// those of the first part's first tasks, which tell it
				// whether the step is under way; and the ply, the merges'
				// and levels' roots, the step's task 0, and the expansion
				// markers (12) for the inputs.
				doneIn := func(lo, hi int) (k int) {
					for _, i := range items[min(lo, n):min(hi, n)] {
						if done[i] {
							k++
						}
					}
					return k
				}
				markers := doneIn(s.Index*scanSpan, (s.Index+1)*scanSpan)
				if s.Index > 0 {
					markers += doneIn(0, scanSpan)
				}
				if tasks > scanSpan || nodes > partFan || entities > markers+20 {
					t.Errorf("scan node %d enqueued %d tasks and %d scans, read %d entities (%d markers of its span)", s.Index, tasks, nodes, entities, markers)
				}
			}
			if tc.forms >= runstore.MessagesScanNodes && tc.started && handlings != (n+scanSpan-1)/scanSpan {
				t.Errorf("%d scans handled, want one a node of %d tasks", handlings, scanSpan)
			}
			want := map[int]int{}
			for _, i := range items {
				if !done[i] {
					want[i] = 1
				}
			}
			if !tc.started {
				want = map[int]int{items[0]: 1} // its first task starts it
			}
			if !maps.Equal(enqueued, want) {
				t.Errorf("enqueued %d tasks (%v...), want the %d not done once each", len(enqueued), firstKeys(enqueued, 8), len(want))
			}
			if got := m.exists(runstore.InputsBlobName(1)); got != tc.inputs {
				t.Errorf("inputs blob written: %v, want %v", got, tc.inputs)
			}
		})
	}
}

// everyThird lists 0 and every third of the n items.
func everyThird(n int) []int {
	var out []int
	for i := 0; i < n; i += 3 {
		out = append(out, i)
	}
	return out
}

// firstKeys lists up to k of the keys of m, in order.
func firstKeys(m map[int]int, k int) []int {
	keys := slices.Sorted(maps.Keys(m))
	return keys[:min(k, len(keys))]
}

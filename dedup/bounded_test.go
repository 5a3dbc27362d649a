package dedup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// reads counts what a handling reads from storage: table entities
// returned (by query pages and point reads) and blob bytes received.
type reads struct {
	mu        sync.Mutex
	entities  int
	blobBytes int64
}

func (r *reads) reset() (entities int, blobBytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	entities, blobBytes = r.entities, r.blobBytes
	r.entities, r.blobBytes = 0, 0
	return entities, blobBytes
}

// meter counts a call's reads; Open's bytes are counted as its body is
// read.
func (r *reads) meter(c *storage.Call, next func() error) error {
	err := next()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil:
	case c.Op == storage.TableQuery:
		r.entities += c.Items
	case c.Op == storage.TableGet:
		r.entities++
	case c.Op == storage.BlobGet:
		r.blobBytes += c.Received
	case c.Op == storage.BlobOpen:
		c.Body = countingBody{c.Body, r}
	}
	return err
}

type countingBody struct {
	io.ReadCloser
	r *reads
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.r.mu.Lock()
	b.r.blobBytes += int64(n)
	b.r.mu.Unlock()
	return n, err
}

// mergingPly is a run whose ply 1 is Merging with the given shape (no
// combine level when groups is 0), on an embedded backend whose reads
// are counted.
type mergingPly struct {
	t     *testing.T
	ctx   context.Context
	reads *reads
	task  *task.Task
	ply   *runstore.Ply
}

func newMergingPly(t *testing.T, tasks, buckets, groups, ranges int) *mergingPly {
	ctx := context.Background()
	r := &reads{}
	be := storage.Wrap(teststore.Embedded(t), r.meter)
	state, back := be.Table("runstate"), be.Table("runback")
	blobs, work := be.Container("blobs"), be.Queue("work")
	for _, c := range []interface{ Create(context.Context) error }{state, back, blobs, work} {
		if err := c.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	store := runstore.New(board.MustNew(8), []storage.Table{state}, []storage.Table{back}, 1, runstore.TreeCompletion)
	p0, err := store.AddFirstPly(ctx, runstore.Claim{Owner: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	shape := &runstore.Ply{Ply: 1, Tasks: tasks, Buckets: buckets}
	if groups > 0 {
		shape.Levels = []runstore.CombineLevel{{Groups: groups, Ranges: ranges}}
	}
	if err := store.Finish(ctx, p0, runstore.Claim{Owner: "seed"}, runstore.Totals{Finals: 1, Positions: 1}, shape); err != nil {
		t.Fatal(err)
	}
	p, err := store.Ply(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.StartMerging(ctx, p, runstore.Claim{Owner: "seed"}); err != nil {
		t.Fatal(err)
	}
	tk := &task.Task{Run: &task.Run{Store: store, Blobs: blobs, Work: work},
		Msg:    storage.Message{ID: "m"},
		Timing: task.Timing{Visibility: time.Minute, CompensationDelay: time.Hour}, Now: time.Now}
	return &mergingPly{t: t, ctx: ctx, reads: r, task: tk, ply: p}
}

// expansions commits a marker for every expansion task, each cutting a
// blob of its own evenly into the ply's buckets, and writes the blobs.
func (m *mergingPly) expansions() {
	st := m.task.Run.Store.ExpansionStage(m.ply)
	for i := range m.ply.Tasks {
		e := runstore.Expansion{Task: i, Blob: runstore.ExpansionBlobName(1, i, "a"), Cuts: make(runstore.Cuts, m.ply.Buckets+1)}
		for b := range e.Cuts {
			e.Cuts[b] = int64(10 * b)
		}
		m.put(e.Blob)
		if _, err := st.Commit(m.ctx, e); err != nil {
			m.t.Fatal(err)
		}
	}
}

// combines commits a marker for every combine task, each cutting a blob
// of its own evenly into its range's buckets, and writes the blobs.
func (m *mergingPly) combines() {
	p := m.ply
	st := m.task.Run.Store.CombineStage(p, 0)
	for i := range p.Levels[0].Groups * p.Levels[0].Ranges {
		span := runstore.SpanOf(i%p.Levels[0].Ranges, p.Buckets, p.Levels[0].Ranges)
		c := runstore.Combine{Index: i, Attempt: "a", Blob: runstore.CombineBlobName(1, i, "a"), Cuts: make(runstore.Cuts, span.Hi-span.Lo+1)}
		for b := range c.Cuts {
			c.Cuts[b] = int64(10 * b)
		}
		m.put(c.Blob)
		if _, err := st.Commit(m.ctx, c); err != nil {
			m.t.Fatal(err)
		}
	}
}

// combinesDone commits a marker for each of the first level's tasks
// items, each cutting a blob of its own evenly into its range's
// buckets, and returns them as a set.
func (m *mergingPly) combinesDone(items []int) map[int]bool {
	p := m.ply
	st := m.task.Run.Store.CombineStage(p, 0)
	done := map[int]bool{}
	for _, i := range items {
		span := runstore.SpanOf(i%p.Levels[0].Ranges, p.Buckets, p.Levels[0].Ranges)
		c := runstore.Combine{Index: i, Attempt: "a", Blob: runstore.CombineBlobName(1, i, "a"), Cuts: make(runstore.Cuts, span.Hi-span.Lo+1)}
		if _, err := st.Commit(m.ctx, c); err != nil {
			m.t.Fatal(err)
		}
		done[i] = true
	}
	return done
}

// mergesDone commits the markers of buckets and returns them as a set.
func (m *mergingPly) mergesDone(buckets []int) map[int]bool {
	done := map[int]bool{}
	for _, b := range buckets {
		m.merges(runstore.Span{Lo: b, Hi: b + 1})
		done[b] = true
	}
	return done
}

// drain dequeues and deletes every message of the work queue.
func (m *mergingPly) drain() []message.Message {
	origin := message.StandardOrigin(board.MustNew(8))
	var out []message.Message
	for {
		msgs, err := m.task.Run.Work.Dequeue(m.ctx, 32, time.Minute)
		if err != nil {
			m.t.Fatal(err)
		}
		if len(msgs) == 0 {
			return out
		}
		for _, msg := range msgs {
			mm, err := message.ParseMessage(origin, msg.Text)
			if err != nil {
				m.t.Fatal(err)
			}
			out = append(out, mm)
			if err := m.task.Run.Work.Delete(m.ctx, msg.ID, msg.PopReceipt); err != nil {
				m.t.Fatal(err)
			}
		}
	}
}

// merges commits the markers of buckets.
func (m *mergingPly) merges(buckets runstore.Span) {
	st := m.task.Run.Store.MergeStage(m.ply)
	for b := buckets.Lo; b < buckets.Hi; b++ {
		if _, err := st.Commit(m.ctx, runstore.BucketMerge{Bucket: b, Attempt: "a"}); err != nil {
			m.t.Fatal(err)
		}
	}
}

func (m *mergingPly) put(name string) {
	if err := m.task.Run.Blobs.Put(m.ctx, name, []byte(name)); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mergingPly) exists(name string) bool {
	_, err := m.task.Run.Blobs.Get(m.ctx, name)
	return err == nil
}

// TestReleaseReadsItsOwn: the release after a combine task reads its
// group's markers, and the release after a bucket merge its range's,
// however many groups and ranges the ply has; each deletes exactly the
// blobs its group or range made spent, and its inputs.
func TestReleaseReadsItsOwn(t *testing.T) {
	for _, c := range []struct{ tasks, groups, ranges, bucketsARange int }{
		{12, 3, 2, 4},
		{24, 6, 2, 4}, // twice the groups
		{12, 3, 4, 4}, // twice the ranges
	} {
		t.Run(fmt.Sprintf("%d tasks in %d groups, %d ranges", c.tasks, c.groups, c.ranges), func(t *testing.T) {
			m := newMergingPly(t, c.tasks, c.ranges*c.bucketsARange, c.groups, c.ranges)
			m.expansions()
			m.combines()
			p := m.ply
			m.put(runstore.CombineInputsBlobName(1, 1))
			m.reads.reset()
			if err := releaseGroup(m.ctx, m.task, p, 1); err != nil {
				t.Fatal(err)
			}
			group := runstore.SpanOf(1, p.Tasks, p.Levels[0].Groups)
			if got, _ := m.reads.reset(); got != p.Levels[0].Ranges+group.Hi-group.Lo {
				t.Errorf("releasing group 1 read %d entities, want its %d combine markers and %d expansion markers", got, p.Levels[0].Ranges, group.Hi-group.Lo)
			}
			for i := range p.Tasks {
				if got, want := m.exists(runstore.ExpansionBlobName(1, i, "a")), runstore.PartOf(i, p.Tasks, p.Levels[0].Groups) != 1; got != want {
					t.Errorf("expansion run %d (group %d) there: %v, want %v", i, runstore.PartOf(i, p.Tasks, p.Levels[0].Groups), got, want)
				}
			}

			if m.exists(runstore.CombineInputsBlobName(1, 1)) {
				t.Error("group 1's inputs are still there")
			}

			// Range 1 with one bucket left reads its merge markers only.
			span := runstore.SpanOf(1, p.Buckets, p.Levels[0].Ranges)
			m.merges(runstore.Span{Lo: span.Lo, Hi: span.Hi - 1})
			m.reads.reset()
			if err := releaseRange(m.ctx, m.task, p, 1); err != nil {
				t.Fatal(err)
			}
			if got, _ := m.reads.reset(); got != span.Hi-span.Lo-1 {
				t.Errorf("releasing range 1 before its last merge read %d entities, want its %d merge markers", got, span.Hi-span.Lo-1)
			}
			m.merges(runstore.Span{Lo: span.Hi - 1, Hi: span.Hi})
			m.put(runstore.RangeInputsBlobName(1, 1))
			m.reads.reset()
			if err := releaseRange(m.ctx, m.task, p, 1); err != nil {
				t.Fatal(err)
			}
			if got, _ := m.reads.reset(); got != span.Hi-span.Lo+p.Levels[0].Groups {
				t.Errorf("releasing range 1 read %d entities, want its %d merge markers and %d combine markers", got, span.Hi-span.Lo, p.Levels[0].Groups)
			}
			if m.exists(runstore.RangeInputsBlobName(1, 1)) {
				t.Error("range 1's inputs are still there")
			}
			for i := range p.Levels[0].Groups * p.Levels[0].Ranges {
				if got, want := m.exists(runstore.CombineBlobName(1, i, "a")), i%p.Levels[0].Ranges != 1; got != want {
					t.Errorf("combined run %d (range %d) there: %v, want %v", i, i%p.Levels[0].Ranges, got, want)
				}
			}
		})
	}
}

// TestCombineReadsItsGroup: a combine task reads its own group's
// expansion markers (the first of the group, which writes the group's
// inputs) or its own list of the group's inputs (the others): doubling
// the ply's tasks, groups of the same size, changes neither.
func TestCombineReadsItsGroup(t *testing.T) {
	type cost struct {
		entities  int
		blobBytes int64
	}
	var first, other []cost
	for _, tasks := range []int{12, 24} {
		const groupSize, ranges, buckets = 4, 3, 9
		m := newMergingPly(t, tasks, buckets, tasks/groupSize, ranges)
		m.expansions()
		p := m.ply
		m.reads.reset()
		in, wrote, err := combineInputs(m.ctx, m.task, p, ranges+1) // group 1, range 1
		if err != nil || !wrote {
			t.Fatalf("the group's first combine: wrote its inputs %v, %v", wrote, err)
		}
		e, b := m.reads.reset()
		first = append(first, cost{e, b})
		if e != groupSize+1 {
			t.Errorf("%d tasks: the group's first combine read %d entities, want its group's %d expansion markers and the ply record", tasks, e, groupSize)
		}
		again, wrote, err := combineInputs(m.ctx, m.task, p, ranges+2) // group 1, range 2
		if err != nil || wrote {
			t.Fatalf("the group's next combine: wrote its inputs %v, %v", wrote, err)
		}
		e, b = m.reads.reset()
		other = append(other, cost{e, b})
		if e != 0 {
			t.Errorf("%d tasks: the group's next combine read %d entities, want none", tasks, e)
		}
		span := runstore.SpanOf(1, buckets, ranges)
		for k, list := range [][]Input{in, again} {
			if len(list) != groupSize {
				t.Fatalf("%d tasks: combine %d has %d inputs, want one of each of its group's %d runs", tasks, k, len(list), groupSize)
			}
			for _, i := range list {
				if i.Len != int64(10*(span.Hi-span.Lo)) {
					t.Errorf("%d tasks: combine input %+v, want %d bytes", tasks, i, 10*(span.Hi-span.Lo))
				}
			}
		}
	}
	if first[0] != first[1] || other[0] != other[1] {
		t.Errorf("a combine's reads changed with twice the tasks: first %v, then %v", first, other)
	}
}

// TestCombineGroupsInTurn: the first combine task of a group past the
// first, once it has written its group's inputs, enqueues the group's
// other tasks and then itself again (task.ErrRequeued), so that the
// groups run in turn; delivered again, it combines.
func TestCombineGroupsInTurn(t *testing.T) {
	const tasks, groups, ranges, buckets = 12, 3, 3, 9
	m := newMergingPly(t, tasks, buckets, groups, ranges)
	m.expansions()
	p := m.ply
	first := p.CombineIndex(0, ranges) // group 1, range 0
	if _, _, err := combineTask(m.ctx, m.task, p, first); !errors.Is(err, task.ErrRequeued) {
		t.Fatalf("group 1's first combine: %v, want it sent again after the group's others", err)
	}
	if queued, err := m.task.Run.Work.ApproximateLength(m.ctx); err != nil || queued != ranges {
		t.Errorf("%d combines enqueued (%v), want the group's other %d and the first again", queued, err, ranges-1)
	}
	if _, _, err := combineTask(m.ctx, m.task, p, first); errors.Is(err, task.ErrRequeued) {
		t.Errorf("group 1's first combine, delivered again, was sent again: %v", err)
	}
	if _, _, err := combineTask(m.ctx, m.task, p, 0); errors.Is(err, task.ErrRequeued) {
		t.Errorf("group 0's first combine was sent again: %v", err)
	}
}

// TestMergeReadsItsRange: in a ply with a combine level, a range's first
// bucket merge reads the range's combine markers, one a group, writes
// the range's inputs and enqueues the range's other buckets, then itself
// again (a range past the first), and those read their own lists of it;
// twice the ranges change neither.
func TestMergeReadsItsRange(t *testing.T) {
	type cost struct {
		entities  int
		blobBytes int64
	}
	var first, other []cost
	for _, ranges := range []int{2, 4} {
		const groups, bucketsARange = 3, 4
		m := newMergingPly(t, 12, ranges*bucketsARange, groups, ranges)
		m.combines()
		p := m.ply
		span := runstore.SpanOf(1, p.Buckets, p.Levels[0].Ranges)
		m.reads.reset()
		if _, err := bucketInputs(m.ctx, m.task, p, span.Lo); !errors.Is(err, task.ErrRequeued) {
			t.Fatalf("%d ranges: the range's first merge: %v, want it sent again after the range's others", ranges, err)
		}
		e, b := m.reads.reset()
		first = append(first, cost{e, b})
		if e != groups+1 {
			t.Errorf("%d ranges: the range's first merge read %d entities, want its %d combine markers and the ply record", ranges, e, groups)
		}
		queued, err := m.task.Run.Work.ApproximateLength(m.ctx)
		if err != nil || queued != bucketsARange {
			t.Errorf("%d ranges: %d merges enqueued (%v), want the range's other %d and the first again", ranges, queued, err, bucketsARange-1)
		}
		in, err := bucketInputs(m.ctx, m.task, p, span.Lo) // the message it sent
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := m.reads.reset(); e != 0 {
			t.Errorf("%d ranges: the range's first merge, sent again, read %d entities, want none", ranges, e)
		}
		again, err := bucketInputs(m.ctx, m.task, p, span.Lo+1)
		if err != nil {
			t.Fatal(err)
		}
		e, b = m.reads.reset()
		other = append(other, cost{e, b})
		if e != 0 {
			t.Errorf("%d ranges: the range's next merge read %d entities, want none", ranges, e)
		}
		for k, list := range [][]Input{in, again} {
			if len(list) != groups {
				t.Errorf("%d ranges: bucket %d has %d inputs, want one of each group's combined run", ranges, span.Lo+k, len(list))
			}
		}
		if queued, err := m.task.Run.Work.ApproximateLength(m.ctx); err != nil || queued != bucketsARange {
			t.Errorf("%d ranges: %d merges enqueued (%v) after the next, want still %d", ranges, queued, err, bucketsARange)
		}
	}
	if first[0] != first[1] || other[0] != other[1] {
		t.Errorf("a merge's reads changed with twice the ranges: first %v, then %v", first, other)
	}
}

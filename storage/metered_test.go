package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a backend whose calls do nothing but what a test sets. Methods
// a test does not set panic through the nil embedded interfaces.
type fake struct {
	listN   int   // names List returns
	err     error // what every call returns
	readAll bool  // whether Upload drains its reader
	// dequeued is what Dequeue returns; nil: two messages.
	dequeued []Message
}

func (f *fake) Queue(name string) Queue         { return fakeQueue{f: f} }
func (f *fake) Container(name string) Container { return fakeContainer{f: f} }
func (f *fake) Table(name string) Table         { return fakeTable{f: f} }
func (f *fake) Close() error                    { return nil }

type fakeQueue struct {
	Queue
	f *fake
}

func (fakeQueue) Name() string { return "q" }

func (q fakeQueue) Enqueue(context.Context, string, EnqueueOptions) (Receipt, error) {
	return Receipt{}, q.f.err
}

func (q fakeQueue) Dequeue(context.Context, int, time.Duration) ([]Message, error) {
	if q.f.dequeued != nil {
		return q.f.dequeued, q.f.err
	}
	return []Message{{Text: "abc"}, {Text: "de"}}, q.f.err
}

type fakeContainer struct {
	Container
	f *fake
}

func (fakeContainer) Name() string { return "c" }

func (c fakeContainer) List(context.Context, string) ([]BlobInfo, error) {
	return make([]BlobInfo, c.f.listN), c.f.err
}

func (c fakeContainer) Upload(_ context.Context, _ string, r io.Reader) error {
	if c.f.readAll {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
	}
	return c.f.err
}

func (c fakeContainer) Open(context.Context, string, int64, int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("0123456789")), c.f.err
}

type fakeTable struct {
	Table
	f *fake
}

func (fakeTable) Name() string { return "t" }

func (t fakeTable) Get(context.Context, string, string) (Entity, error) { return Entity{}, t.f.err }

func count(s Stats, service, op, cat string) int64 {
	for _, o := range s.Ops {
		if o.Service == service && o.Operation == op && o.Category == cat {
			return o.Count
		}
	}
	return 0
}

func TestMeteredListPages(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ n, pages int64 }{{0, 1}, {1, 1}, {5000, 1}, {5001, 2}, {12001, 3}} {
		m := NewMetered(&fake{listN: int(tc.n)})
		if _, err := m.Container("c").List(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if got := count(m.Stats(), ServiceBlob, "list", ""); got != tc.pages {
			t.Errorf("list of %d: %d transactions, want %d", tc.n, got, tc.pages)
		}
	}
}

func TestMeteredUpload(t *testing.T) {
	ctx := context.Background()
	const block = UploadBlockBytes
	for _, tc := range []struct {
		n                       int64
		single, blocks, commits int64
	}{
		{0, 1, 0, 0},
		{1, 1, 0, 0},
		{block, 1, 0, 0},
		{block + 1, 0, 2, 1},
		{3 * block, 0, 3, 1},
		{3*block + 7, 0, 4, 1},
	} {
		m := NewMetered(&fake{readAll: true})
		if err := m.Container("c").Upload(ctx, "b", io.LimitReader(zeros{}, tc.n)); err != nil {
			t.Fatal(err)
		}
		s := m.Stats()
		if count(s, ServiceBlob, "upload", "") != tc.single || count(s, ServiceBlob, "put_block", "") != tc.blocks ||
			count(s, ServiceBlob, "put_block_list", "") != tc.commits {
			t.Errorf("upload of %d bytes: %+v, want %d single, %d blocks, %d commits", tc.n, s.Ops, tc.single, tc.blocks, tc.commits)
		}
		if s.BytesWritten != tc.n {
			t.Errorf("upload of %d bytes: %d bytes written", tc.n, s.BytesWritten)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestMeteredErrors(t *testing.T) {
	ctx := context.Background()
	f := &fake{err: ErrInvalid}
	m := NewMetered(f)
	m.Queue("q").Enqueue(ctx, "x", EnqueueOptions{})
	m.Table("t").Get(ctx, "p", "r")
	m.Container("c").Upload(ctx, "b", bytes.NewReader(nil))
	if s := m.Stats(); s.Total() != 0 || s.BytesWritten != 0 {
		t.Errorf("calls refused with ErrInvalid were billed: %+v", s)
	}
	// Any other failure was a request, and Azure bills it.
	f.err = ErrNotFound
	m.Queue("q").Enqueue(ctx, "x", EnqueueOptions{})
	m.Table("t").Get(ctx, "p", "r")
	if s := m.Stats(); s.Total() != 2 || s.BytesWritten != 0 {
		t.Errorf("failed calls: %+v, want 2 transactions and no bytes", s)
	}
	f.err = errors.Join(ErrTransient, errors.New("timeout"))
	m.Table("t").Get(ctx, "p", "r")
	if got := count(m.Stats(), ServiceTable, "get", ""); got != 2 {
		t.Errorf("gets: %d, want 2", got)
	}
}

func TestMeteredBytesRead(t *testing.T) {
	ctx := context.Background()
	m := NewMetered(&fake{})
	if _, err := m.Queue("q").Dequeue(ctx, 32, time.Minute); err != nil {
		t.Fatal(err)
	}
	rc, err := m.Container("c").Open(ctx, "b", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(rc, buf); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if s := m.Stats(); s.BytesRead != 5+4 {
		t.Errorf("bytes read: %d, want 5 of messages and 4 of a blob", s.BytesRead)
	}
}

func TestMeteredCategories(t *testing.T) {
	m := NewMetered(&fake{})
	cats := []string{"", "enumeration", "dedup", "backtrack"}
	const workers, calls = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := WithCategory(context.Background(), cats[w%len(cats)])
			for range calls {
				m.Table("t").Get(ctx, "p", "r")
			}
		})
	}
	wg.Wait()
	s := m.Stats()
	per := int64(workers / len(cats) * calls)
	if len(s.Ops) != len(cats) {
		t.Fatalf("ops: %+v, want one per category", s.Ops)
	}
	// Sorted by service, operation, then category; "" first.
	for i, want := range []string{"", "backtrack", "dedup", "enumeration"} {
		if s.Ops[i].Category != want || s.Ops[i].Count != per {
			t.Errorf("ops[%d] = %+v, want category %q with %d", i, s.Ops[i], want, per)
		}
	}
	by := s.ByCategory()
	if by["dedup"] != per || s.Total() != workers*calls {
		t.Errorf("by category %v, total %d", by, s.Total())
	}
	if CategoryFrom(context.Background()) != "" || CategoryFrom(WithCategory(context.Background(), "x")) != "x" {
		t.Error("CategoryFrom does not return what WithCategory set")
	}
}

func TestStatsSub(t *testing.T) {
	ctx := context.Background()
	m := NewMetered(&fake{})
	m.Table("t").Get(ctx, "p", "r")
	before := m.Stats()
	m.Table("t").Get(ctx, "p", "r")
	m.Table("t").Get(WithCategory(ctx, "dedup"), "p", "r")
	m.Queue("q").Enqueue(ctx, "abcd", EnqueueOptions{})
	d := m.Stats().Sub(before)
	want := []OpStat{
		{Service: ServiceQueue, Operation: "enqueue", Count: 1},
		{Service: ServiceTable, Operation: "get", Count: 1},
		{Service: ServiceTable, Operation: "get", Category: "dedup", Count: 1},
	}
	if len(d.Ops) != len(want) || d.BytesWritten != 4 {
		t.Fatalf("sub: %+v", d)
	}
	for i := range want {
		if d.Ops[i] != want[i] {
			t.Errorf("sub ops[%d] = %+v, want %+v", i, d.Ops[i], want[i])
		}
	}
}

// TestMeteredPlies: calls made for a ply are counted for it as well as
// for their category; calls for no ply are the unattributed rest.
func TestMeteredPlies(t *testing.T) {
	m := NewMetered(&fake{listN: ListPageSize + 1})
	ctx := context.Background()
	var wg sync.WaitGroup
	for ply := range 4 {
		wg.Go(func() {
			pctx := WithPly(WithCategory(ctx, "dedup"), ply)
			for range 100 * (ply + 1) {
				m.Table("t").Get(pctx, "p", "r")
			}
			m.Container("c").List(pctx, "") // two pages
		})
	}
	wg.Wait()
	m.Table("t").Get(ctx, "p", "r")
	m.Queue("q").Dequeue(WithCategory(ctx, "control"), 1, time.Second)
	s := m.Stats()
	if len(s.Plies) != 4 {
		t.Fatalf("plies %+v, want 4", s.Plies)
	}
	var sum int64
	for i, p := range s.Plies {
		want := map[string]int64{"table.get": int64(100 * (i + 1)), "blob.list": 2}
		if p.Ply != i || len(p.Ops) != 2 || p.Ops["table.get"] != want["table.get"] || p.Ops["blob.list"] != 2 {
			t.Errorf("plies[%d] = %+v, want ply %d with %v", i, p, i, want)
		}
		sum += p.Total()
	}
	if s.Unattributed() != 2 || sum+2 != s.Total() || count(s, ServiceTable, "get", "dedup") != 1000 {
		t.Errorf("unattributed %d, plies %d, total %d", s.Unattributed(), sum, s.Total())
	}
	if _, ok := PlyFrom(ctx); ok {
		t.Error("PlyFrom finds a ply in a bare context")
	}
	if p, ok := PlyFrom(WithPly(ctx, 0)); !ok || p != 0 {
		t.Errorf("PlyFrom(WithPly(0)) = %d, %v", p, ok)
	}
}

// TestMeteredDequeuePly: a dequeue made with WithPlyOfMessage is its one
// message's ply's, and no handling's; one that finds nothing, or a
// message that names no ply, is no ply's.
func TestMeteredDequeuePly(t *testing.T) {
	f := &fake{}
	m := NewMetered(f)
	plyOf := func(text string) (int, bool) {
		if text == "bad" {
			return 0, false
		}
		return len(text), true
	}
	ctx := WithPlyOfMessage(WithCategory(context.Background(), "control"), plyOf)
	for _, msgs := range [][]Message{{{Text: "abcde"}}, {{Text: "abcde"}}, {{Text: "abc"}}, {}, {{Text: "bad"}}} {
		f.dequeued = msgs
		m.Queue("q").Dequeue(ctx, 1, time.Second)
	}
	s := m.Stats()
	got := map[int]int64{}
	for _, p := range s.Plies {
		got[p.Ply] = p.Ops["queue.dequeue"]
		if p.Tasks != 0 || p.MaxTaskTransactions != 0 {
			t.Errorf("ply %d: %d handlings, at most %d transactions; a dequeue is none", p.Ply, p.Tasks, p.MaxTaskTransactions)
		}
	}
	if want := map[int]int64{5: 2, 3: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("dequeues by ply %v, want %v", got, want)
	}
	if s.Unattributed() != 2 || s.Total() != 5 {
		t.Errorf("unattributed %d of %d, want 2 of 5", s.Unattributed(), s.Total())
	}
}

// TestStatsAdd adds two processes' statistics, and subtracts one again.
func TestStatsAdd(t *testing.T) {
	a := Stats{
		Ops: []OpStat{{Service: ServiceTable, Operation: "get", Category: "dedup", Count: 3}, {Service: ServiceQueue, Operation: "dequeue", Count: 2}},
		Plies: []PlyStat{{Ply: 1, Ops: map[string]int64{"table.get": 3},
			ByKind: map[string]KindStat{"merge": {Handlings: 2, Transactions: 3, EntityReads: 5, MaxTransactions: 2, MaxEntities: 4}}}},
		BytesWritten: 10, BytesRead: 20,
	}
	b := Stats{
		Ops: []OpStat{{Service: ServiceTable, Operation: "get", Category: "dedup", Count: 4}, {Service: ServiceBlob, Operation: "get", Count: 1}},
		Plies: []PlyStat{{Ply: 2, Ops: map[string]int64{"table.get": 4}}, {Ply: 1, Ops: map[string]int64{"blob.get": 1},
			ByKind: map[string]KindStat{"merge": {Handlings: 1, Transactions: 1, EntityReads: 7, MaxTransactions: 1, MaxEntities: 7},
				"scan": {Handlings: 1, Transactions: 1, MaxTransactions: 1}}}},
		BytesWritten: 1, BytesRead: 2,
	}
	sum := a.Add(b)
	wantOps := []OpStat{
		{Service: ServiceBlob, Operation: "get", Count: 1},
		{Service: ServiceQueue, Operation: "dequeue", Count: 2},
		{Service: ServiceTable, Operation: "get", Category: "dedup", Count: 7},
	}
	// Kinds' totals add up and their maxima are the larger; subtracted
	// again, the totals go back and a kind left with nothing goes.
	wantPlies := []PlyStat{{Ply: 1, Ops: map[string]int64{"table.get": 3, "blob.get": 1},
		ByKind: map[string]KindStat{"merge": {Handlings: 3, Transactions: 4, EntityReads: 12, MaxTransactions: 2, MaxEntities: 7},
			"scan": {Handlings: 1, Transactions: 1, MaxTransactions: 1}}},
		{Ply: 2, Ops: map[string]int64{"table.get": 4}}}
	if !reflect.DeepEqual(sum.Ops, wantOps) || !reflect.DeepEqual(sum.Plies, wantPlies) || sum.BytesWritten != 11 || sum.BytesRead != 22 {
		t.Errorf("a+b = %+v, want ops %+v and plies %+v", sum, wantOps, wantPlies)
	}
	if sum.Unattributed() != 2 {
		t.Errorf("unattributed %d, want the 2 dequeues", sum.Unattributed())
	}
	back := sum.Sub(b)
	// A difference keeps the maxima of its first operand, and leaves out
	// the kinds it has none of.
	a.Plies[0].ByKind["merge"] = KindStat{Handlings: 2, Transactions: 3, EntityReads: 5, MaxTransactions: 2, MaxEntities: 7}
	if !reflect.DeepEqual(back.Plies, a.Plies) || back.Total() != a.Total() || back.BytesRead != a.BytesRead {
		t.Errorf("a+b-b = %+v, want %+v", back, a)
	}
	if a.Plies[0].Ops["blob.get"] != 0 {
		t.Error("Add changed its operand's maps")
	}
}

// BenchmarkMetered is the cost Metered adds to a call: the interception
// and the count.
func BenchmarkMetered(b *testing.B) {
	m := NewMetered(&fake{})
	ctx := WithPly(WithCategory(context.Background(), "dedup"), 7)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		t := m.Table("t")
		for pb.Next() {
			t.Get(ctx, "p", "r")
		}
	})
}

// TestMeteredHandlings: the calls of a handling count in it, an upload's
// blocks and a Get's entity included; its ply keeps how many handlings
// there were and the most one cost, overall and by kind; a backend metered twice counts each
// handling once, in the meter nearest the backend.
func TestMeteredHandlings(t *testing.T) {
	inner := NewMetered(&fake{readAll: true})
	outer := NewMetered(inner)
	ctx := context.Background()
	first := WithHandling(ctx, 5, "merge")
	for range 3 {
		if _, err := outer.Table("t").Get(first, "p", "r"); err != nil {
			t.Fatal(err)
		}
	}
	if err := outer.Container("c").Upload(first, "b", io.LimitReader(zeros{}, 2*UploadBlockBytes)); err != nil {
		t.Fatal(err)
	}
	second := WithHandling(ctx, 5, "scan")
	if _, err := outer.Queue("q").Dequeue(second, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	// Not a handling: the ply's, but no task's.
	if _, err := outer.Table("t").Get(WithPly(ctx, 5), "p", "r"); err != nil {
		t.Fatal(err)
	}
	want := PlyStat{Ply: 5, EntityReads: 4, Tasks: 2, MaxTaskTransactions: 6, MaxTaskEntities: 3,
		ByKind: map[string]KindStat{
			"merge": {Handlings: 1, Transactions: 6, EntityReads: 3, MaxTransactions: 6, MaxEntities: 3},
			"scan":  {Handlings: 1, Transactions: 1, MaxTransactions: 1}}}
	for _, tc := range []struct {
		name string
		m    *Metered
		want PlyStat
	}{
		{"inner", inner, want},
		{"outer", outer, PlyStat{Ply: 5, EntityReads: 4}},
	} {
		s := tc.m.Stats()
		if len(s.Plies) != 1 {
			t.Fatalf("%s: plies %+v", tc.name, s.Plies)
		}
		got := s.Plies[0]
		secs := got.MaxTaskSeconds
		got.Ops, got.MaxTaskSeconds = nil, 0
		if !reflect.DeepEqual(got, tc.want) || (secs > 0) != (tc.want.Tasks > 0) {
			t.Errorf("%s: %+v (%gs), want %+v", tc.name, got, secs, tc.want)
		}
	}
}

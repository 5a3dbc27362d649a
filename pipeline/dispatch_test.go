package pipeline

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/faulty"
	"github.com/reversi-cloud/reversi/task"
)

// TestDispatchFansOut makes ply 1 of a run Final with 5,000 final blobs
// (records only: the merges of 313 buckets of 16), so that its dispatch has more leaves than one range
// enqueues at once, and does the owner's follow-up. Every D message is
// then handled first through storage that fails after one of its calls,
// as if its worker died there, and again; the C messages are collected.
// The follow-up and each D handling make at most about two calls per
// unit of a leaf; every final blob gets its C message, none more than
// twice (a leaf found done is not repeated); the ply is made Dispatched
// once its last leaf is done, and the tree is three levels deep. The
// leaves write the final blob rows: every one, in key order.
func TestDispatchFansOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "fanout", Config: runstore.Config{Board: 6, Target: 9}}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	discardQueue(t, ctx, r) // ply 1's A message
	const n = 5000
	p, err := r.store.Ply(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	owner := runstore.Claim{Owner: "owner", Now: time.Now(), Until: time.Now().Add(time.Minute)}
	start := r.Board.Canonical(r.Board.Start())
	want := map[string]bool{}
	p.Buckets = (n + 15) / 16
	if err := r.store.StartMerging(ctx, p, owner); err != nil {
		t.Fatal(err)
	}
	mst := r.store.MergeStage(p)
	for b := range p.Buckets {
		bm := runstore.BucketMerge{Bucket: b, Attempt: "t"}
		for i := b * 16; i < min(n, (b+1)*16); i++ {
			blob := runstore.FinalRunBlobName(1, b, i%16, "t")
			bm.Merged = append(bm.Merged, &runstore.MergedBlob{Blob: blob, Count: 1, Min: start, Max: start})
			want[message.Message{Kind: message.KindChunk, Ply: 1, Index: i, Blob: blob}.Format()] = true
		}
		bm.Outputs = int64(len(bm.Merged))
		if _, err := mst.Commit(ctx, bm); err != nil {
			t.Fatal(err)
		}
		if _, err := mst.AllDone(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.store.Finish(ctx, p, owner, runstore.Totals{Finals: n, Positions: n}, nil); err != nil {
		t.Fatal(err)
	}
	leaves := r.store.DispatchStage(p).Items()
	if leaves <= runstore.DispatchFan {
		t.Fatalf("%d leaves: too few for a tree of three levels", leaves)
	}
	maxCalls := int64(2*runstore.DispatchFan + 16)
	before := be.Stats().Total()
	if err := r.followUp(ctx, p, owner); err != nil {
		t.Fatal(err)
	}
	if calls := be.Stats().Total() - before; calls > maxCalls {
		t.Errorf("the owner's follow-up made %d storage calls, want at most %d", calls, maxCalls)
	}

	got := map[string]int{}
	ranges := map[int]int{} // D messages by how many leaves they cover
	handled := 0
	for {
		msgs, err := r.work.Dequeue(ctx, 32, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, msg := range msgs {
			m, err := message.ParseMessage(r.shared.Origin, msg.Text)
			if err != nil {
				t.Fatal(err)
			}
			switch m.Kind {
			case message.KindChunk:
				got[msg.Text]++
			case message.KindDispatch:
				ranges[m.End-m.Index]++
				// The first delivery fails after one of its first calls,
				// which has taken effect; the second is clean.
				fail := faulty.New(be, faulty.Config{Mode: faulty.FailAfter, At: int64(1 + handled%12)})
				if err := handleDispatch(ctx, fail, cfg.Name, msg, m); err == nil && fail.Fired() != "" {
					t.Errorf("%s: the failure at %s went unnoticed", msg.Text, fail.Fired())
				}
				before := be.Stats().Total()
				if err := handleDispatch(ctx, be, cfg.Name, msg, m); err != nil {
					t.Fatalf("%s: %v", msg.Text, err)
				}
				if calls := be.Stats().Total() - before; calls > maxCalls {
					t.Errorf("%s made %d storage calls, want at most %d", msg.Text, calls, maxCalls)
				}
				handled++
			default:
				t.Fatalf("unexpected message %s", msg.Text)
			}
			if err := r.work.Delete(ctx, msg.ID, msg.PopReceipt); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d leaves; D messages by leaves covered: %v", leaves, ranges)
	for text := range want {
		if got[text] == 0 {
			t.Errorf("%s was never enqueued", text)
		}
	}
	for text, k := range got {
		if !want[text] || k > 2 {
			t.Errorf("%s enqueued %d times", text, k)
		}
	}
	if ranges[1] < leaves || len(ranges) < 2 {
		t.Errorf("D messages by leaves covered: %v; want every one of %d leaves and ranges of several", ranges, leaves)
	}
	if p, err := r.store.Ply(ctx, 1); err != nil || p.State != runstore.Dispatched {
		t.Errorf("ply 1 after its dispatch: %+v, %v; want dispatched", p, err)
	}
	finals, err := r.store.Finals(ctx, 1)
	if err != nil || len(finals) != n {
		t.Fatalf("%d final blob rows, %v; want %d", len(finals), err, n)
	}
	for i, f := range finals {
		if text := (message.Message{Kind: message.KindChunk, Ply: 1, Index: i, Blob: f.Blob}).Format(); !want[text] {
			t.Errorf("final blob %d is %s, not the %d-th merged blob", i, f.Blob, i)
		}
	}
}

// handleDispatch handles one D message through be, as a worker would.
func handleDispatch(ctx context.Context, be storage.Backend, name string, msg storage.Message, m message.Message) error {
	r, err := OpenRun(ctx, be, name)
	if err != nil {
		return err
	}
	t := &task.Task{Run: r.shared, Msg: msg, Timing: task.Timing{Visibility: time.Minute, CompensationDelay: 4 * time.Minute},
		Log: slog.New(slog.DiscardHandler), Progress: &Progress{}, Flow: flow{r}, Now: time.Now}
	return route(ctx, t, m)
}

// discardQueue deletes every message in the work queue.
func discardQueue(t *testing.T, ctx context.Context, r *Run) {
	t.Helper()
	for {
		msgs, err := r.work.Dequeue(ctx, 32, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		for _, msg := range msgs {
			if err := r.work.Delete(ctx, msg.ID, msg.PopReceipt); err != nil {
				t.Fatal(err)
			}
		}
	}
}

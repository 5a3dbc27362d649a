package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// dupBackend delivers every message twice, as a retried enqueue can: both
// copies are handled, concurrently or one after the other.
type dupBackend struct{ storage.Backend }

func (d dupBackend) Queue(name string) storage.Queue { return dupQueue{d.Backend.Queue(name)} }

type dupQueue struct{ storage.Queue }

func (q dupQueue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	if _, err := q.Queue.Enqueue(ctx, text, opts); err != nil {
		return storage.Receipt{}, err
	}
	return q.Queue.Enqueue(ctx, text, opts)
}

func TestEveryMessageTwice(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		be := dupBackend{teststore.Embedded(t)}
		cfg := RunConfig{Name: "twice", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 120, BucketBlobs: 3}}}
		rep, err := RunLocal(ctx, be, cfg, workers, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Root != "white" {
			t.Errorf("%d workers: root %s, want white", workers, rep.Root)
		}
		for i, p := range rep.Plies {
			got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}
			if got != testkit.Ref4x4[i] {
				t.Errorf("%d workers, ply %d: got %v, want %v", workers, i, got, testkit.Ref4x4[i])
			}
		}
	}
}

// TestOneMergeRoundPerBucket checks that every entry an expansion task
// writes is read by exactly one merge, and that every bucket is merged
// by exactly one committed merge, at every ply: the merge work is linear
// in the edges, with no second round.
func TestOneMergeRoundPerBucket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "oneround", Config: runstore.Config{Board: 8, Target: 8, Sizes: runstore.Sizes{BlobPositions: 1500, BucketBlobs: 4}}}
	if _, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	manyBuckets := false
	for ply := 1; ply <= cfg.Target; ply++ {
		p, err := r.store.Ply(ctx, ply)
		if err != nil {
			t.Fatal(err)
		}
		exps, err := r.store.ExpansionStage(p).Markers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var entries int64
		for _, e := range exps {
			entries += e.Entries
		}
		t.Logf("ply %d: %d expansion tasks, %d buckets, %d merges, %d segments read, %d entries written, %d read",
			ply, len(exps), p.Buckets, p.Merges, p.BlobReads, entries, p.Merged)
		if p.Merged != entries || p.Merges != int64(p.Buckets) {
			t.Errorf("ply %d: %d entries read by %d merges; want the %d entries written, read by one merge per bucket (%d)",
				ply, p.Merged, p.Merges, entries, p.Buckets)
		}
		manyBuckets = manyBuckets || p.Buckets > 4 && len(exps) > 4
	}
	if !manyBuckets {
		t.Error("no ply had more than 4 buckets and 4 expansion tasks: the test shows nothing")
	}
}

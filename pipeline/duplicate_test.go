package pipeline

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
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
		be := dupBackend{openEmbedded(t)}
		cfg := RunConfig{Name: "twice", Board: 4, Target: 12, BlobPositions: 120, FanIn: 3}
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

// TestMergeWorkIsNLogN checks that each edge is read by at most
// 1+ceil(log_fanIn(runs per bucket)) merges, where the runs per bucket are
// the expansion tasks of the previous ply: the merge work grows like
// sorting, not like the square of the number of blobs.
func TestMergeWorkIsNLogN(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := openEmbedded(t)
	const fanIn = 4
	cfg := RunConfig{Name: "nlogn", Board: 8, Target: 8, BlobPositions: 1500, FanIn: fanIn}
	rep, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rep.Plies); i++ {
		p, tasks := rep.Plies[i], rep.Plies[i-1].Blobs
		levels := 1 + math.Ceil(math.Log(float64(tasks))/math.Log(fanIn))
		perEdge := float64(p.MergedKeys) / float64(p.Edges)
		t.Logf("ply %d: %d edges, %d tasks, %d merges, %d blob reads, %.2f merge reads per edge (bound %.0f)", i, p.Edges, tasks, p.Merges, p.BlobReads, perEdge, levels)
		if perEdge > levels {
			t.Errorf("ply %d: %.2f merge reads per edge, more than %.0f", i, perEdge, levels)
		}
	}
}

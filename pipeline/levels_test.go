package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestSizeRules runs small plies with every size rule in force: final
// blobs and buckets that double from ply 3 (4x4) or 7 (8x8) on, and a
// merge fan-in so low that most plies get a combine level. The counts
// and results must match the reference tables, every ply past the fan-in
// must have been combined or merged in wide buckets, and final blobs
// must have grown.
func TestSizeRules(t *testing.T) {
	wide := 0 // plies merged in wide buckets
	for _, tc := range []struct {
		name string
		cfg  RunConfig
		want func(t *testing.T, ply int, got [6]int64)
	}{
		{"4x4", RunConfig{Name: "levelsfour", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 1, GrowFrom: 3, MergeFanIn: 2}}},
			func(t *testing.T, ply int, got [6]int64) {
				if got != testkit.Ref4x4[ply] {
					t.Errorf("ply %d: got %v, want %v", ply, got, testkit.Ref4x4[ply])
				}
			}},
		{"8x8", RunConfig{Name: "levelseight", Config: runstore.Config{Board: 8, Target: 8, Sizes: runstore.Sizes{BlobPositions: 300, BucketBlobs: 2, GrowFrom: 7, MergeFanIn: 3}}},
			func(t *testing.T, ply int, got [6]int64) {
				if got[0] != testkit.Ref8x8Positions[ply] || got[2] != testkit.Ref8x8Edges[ply] {
					t.Errorf("ply %d: %d positions and %d edges, want %d and %d", ply, got[0], got[2], testkit.Ref8x8Positions[ply], testkit.Ref8x8Edges[ply])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			be := teststore.Embedded(t)
			rep, err := RunLocal(ctx, be, tc.cfg, 3, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Complete {
				t.Fatal("the run did not complete")
			}
			sizes := tc.cfg.Sizes
			combined := 0
			for i, p := range rep.Plies {
				tc.want(t, i, [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws})
				if limit := int64(sizes.BlobPositionsAt(i)); p.Blobs > 0 && p.Positions > p.Blobs*limit {
					t.Errorf("ply %d: %d positions in %d final blobs of at most %d", i, p.Positions, p.Blobs, limit)
				}
				if i == 0 {
					continue
				}
				tasks := int(rep.Plies[i-1].Blobs)
				if most := sizes.MostBuckets(tasks); p.Merges > int64(most) {
					t.Errorf("ply %d: %d buckets with %d expansion tasks, at most %d", i, p.Merges, tasks, most)
				} else if most == runstore.MinRanges {
					wide++
				}
				if len(sizes.Levels(tasks, max(1, int(p.Merges)))) > 0 {
					combined++
					if p.Combines == 0 {
						t.Errorf("ply %d: %d expansion tasks over a fan-in of %d, but no combines", i, tasks, sizes.MergeFanIn)
					}
				} else if p.Combines != 0 {
					t.Errorf("ply %d: %d combines with %d expansion tasks, within the fan-in", i, p.Combines, tasks)
				}
			}
			if combined < 2 {
				t.Errorf("only %d plies were combined: the test does not exercise the combine level", combined)
			}
			last := rep.Plies[len(rep.Plies)-1]
			if grown := sizes.BlobPositionsAt(len(rep.Plies) - 1); grown <= tc.cfg.BlobPositions || last.Positions <= int64(tc.cfg.BlobPositions)*last.Blobs {
				t.Errorf("the last ply holds %d positions in %d blobs: final blobs did not grow past %d (to %d)", last.Positions, last.Blobs, tc.cfg.BlobPositions, grown)
			}
		})
	}
	if wide == 0 {
		t.Error("no ply was merged in wide buckets: the test does not exercise them")
	}
}

// TestLargeGroupsStartThroughATree runs 8x8 to ply 6 with sizes so small
// that ply 6 has three combine levels, the last of 4 groups of 119
// ranges: more tasks in a group than one handling enqueues as it starts
// (dedup's treeChildren), so the group's tasks start one another. The
// run must be exact, without a stalled run's scan (which would enqueue
// whatever a start missed), and no combine handling may have made as
// many calls as a group's tasks.
func TestLargeGroupsStartThroughATree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := RunConfig{Name: "largegroups", Config: runstore.Config{Board: 8, Target: 6, Sizes: runstore.Sizes{BlobPositions: 4, BucketBlobs: 1, MergeFanIn: 4}}}
	var logs testkit.Buffer
	m := teststore.Embedded(t)
	rep, err := RunLocal(ctx, m, cfg, 3, WorkerConfig{Visibility: 30 * time.Second, PollMax: 50 * time.Millisecond}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete {
		t.Fatal("the run did not complete")
	}
	rep.SetHandlings(m.Stats().Plies)
	for i, p := range rep.Plies {
		if p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i] {
			t.Errorf("ply %d: %d positions and %d edges, want %d and %d", i, p.Positions, p.Edges, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
		}
	}
	last := rep.Plies[6]
	levels := cfg.Sizes.Levels(int(rep.Plies[5].Blobs), int(last.Merges))
	ranges := 0
	for _, l := range levels {
		ranges = max(ranges, l.Ranges)
	}
	// 64 is dedup's partFan: a group of up to 65 ranges is started by
	// its first task alone.
	if ranges <= 65 {
		t.Fatalf("ply 6's combine levels %v: no group has more than 65 ranges, so the test does not exercise the tree", levels)
	}
	if most := last.ByKind["combine"].MaxTransactions; most >= int64(ranges) {
		t.Errorf("a combine handling made %d storage calls: as many as a group's %d tasks", most, ranges)
	}
	if strings.Contains(logs.String(), "enqueued a scan") {
		t.Errorf("the run stalled and was nudged:\n%s", logs.String())
	}
}

// TestCombineTreeAfterACrash has a worker die at the first enqueue of a
// combine task past its group's first, in a group of more tasks than
// one handling starts (dedup's treeChildren): the task starts its own
// share of the group. Its message comes back after the visibility
// timeout, and its redelivery must start that share, so that a second
// worker finishes the run exactly, with nothing left behind and no
// stalled run's scan.
func TestCombineTreeAfterACrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := RunConfig{Name: "combinecrash", Config: runstore.Config{Board: 8, Target: 5, Sizes: runstore.Sizes{BlobPositions: 2, BucketBlobs: 1, MergeFanIn: 2}}}
	inner := teststore.Embedded(t)
	run, err := Seed(ctx, inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	origin := message.StandardOrigin(board.MustNew(cfg.Board))
	errCrash := errors.New("the worker is dead")
	// pastFirst tells a combine task past the first of a group of more
	// than 65 tasks (partFan+1: the first starts them all below that).
	pastFirst := func(m message.Message) bool {
		p, err := run.store.Ply(ctx, m.Ply)
		if err != nil {
			t.Error(err)
			return false
		}
		level, j, ok := p.CombineAt(m.Index)
		return ok && p.Levels[level].Ranges > 65 && j%p.Levels[level].Ranges > 0
	}
	var mu sync.Mutex
	var handling message.Message // a's, from its last dequeue (one loop)
	dead := false
	aCtx, kill := context.WithCancel(ctx)
	defer kill()
	beA := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		mu.Lock()
		defer mu.Unlock()
		if !dead && c.Op == storage.QueueEnqueue && c.Resource == WorkQueue(cfg.Name) && handling.Kind == message.KindCombine && pastFirst(handling) {
			dead = true
			kill()
		}
		if dead {
			return errCrash // nothing reaches storage once the worker is dead
		}
		err := next()
		if c.Op == storage.QueueDequeue && len(c.Messages) > 0 {
			handling = message.Message{}
			if c.Resource == WorkQueue(cfg.Name) {
				handling, _ = message.ParseMessage(origin, c.Messages[0].Text)
			}
		}
		return err
	})
	ra, err := OpenRun(ctx, beA, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := WorkerConfig{Visibility: 2 * time.Second, ExitWhenDone: true, PollMin: time.Millisecond, PollMax: 20 * time.Millisecond}
	wa, err := NewWorker(ra, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	wa.Run(aCtx)
	if !dead {
		t.Fatal("worker a finished the run without handling a combine task past its group's first")
	}
	t.Logf("a died as %+v", handling)

	var logs testkit.Buffer
	wb, err := NewWorker(run, wcfg, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wb.Run(ctx)
	if strings.Contains(logs.String(), "enqueued a scan") {
		t.Errorf("the run stalled and was nudged:\n%s", logs.String())
	}
	ref, err := reference.Enumerate(board.MustNew(cfg.Board), cfg.Target)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkRun(ctx, inner, cfg, ref); err != nil {
		t.Error(err)
	}
}

package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// TestStages runs the data-driven files of testdata, one per stage:
// each drives task.Do over the stage's real markers on the embedded
// backend, with work that writes the blob a handler of the stage would
// write, and checks the commit, a lost race, a redelivery and a crash
// between each two steps. Commands:
//
//	setup state=S tasks=N buckets=N groups=N ranges=N finals=N
//	                        records ply 1 with those figures, in state S
//	state to=S finals=N     moves ply 1 forward to state S
//	deliver item=I attempt=A [fail=work|deadline|surface|follow-up|requeue] [then=B]
//	                        one delivery of item I, as attempt A: its
//	                        trace; fail crashes it after that step, or
//	                        with surface has the compensation message of
//	                        A's blob surface and be handled before A's
//	                        commit, or with requeue has the work send
//	                        the message again (task.ErrRequeued) before
//	                        it writes anything; then=B runs attempt B
//	                        whole between A's work and A's commit
//	markers                 the stage's markers
//	all-done given=I        Stage.AllDone, given item I
//	complete                Stage.Complete
//	runs                    the ply's committed merge outputs
//	blobs                   every blob, and whether its compensation
//	                        message, surfacing now, keeps it or deletes
//	                        it (runstore.Store.Keep, which fences the
//	                        attempts whose blobs it deletes)
//	compensations           compensation messages pending
//	surface item=I attempt=A  the handler of the compensation message of
//	                        item I's attempt A, as if it surfaced now;
//	                        then the item's blobs left
func TestStages(t *testing.T) {
	t.Run("expansion", func(t *testing.T) {
		runStage(t, "testdata/expansion", stageCase[runstore.Expansion]{
			stage:  (*runstore.Store).ExpansionStage,
			writes: func(i int, a string) []string { return []string{runstore.ExpansionBlobName(1, i, a)} },
			marker: func(i int, a string, blobs []string) runstore.Expansion {
				return runstore.Expansion{Task: i, Blob: blobs[0], Cuts: runstore.Cuts{0, 1, 2}, Parents: 1, Edges: 2, Entries: 2}
			},
			show: func(e runstore.Expansion) string {
				return fmt.Sprintf("task %d: %s cut at %v, %d edges", e.Task, e.Blob, e.Cuts, e.Edges)
			},
			covered: true,
		})
	})
	t.Run("combine", func(t *testing.T) {
		runStage(t, "testdata/combine", stageCase[runstore.Combine]{
			stage:  func(s *runstore.Store, p *runstore.Ply) runstore.Stage[runstore.Combine] { return s.CombineStage(p, 0) },
			writes: func(i int, a string) []string { return []string{runstore.CombineBlobName(1, i, a)} },
			marker: func(i int, a string, blobs []string) runstore.Combine {
				return runstore.Combine{Index: i, Attempt: a, Blob: blobs[0], Cuts: runstore.Cuts{0, 2}, Segments: 2, Entries: 2}
			},
			show: func(c runstore.Combine) string {
				return fmt.Sprintf("combine task %d: attempt %s, %s cut at %v", c.Index, c.Attempt, c.Blob, c.Cuts)
			},
			covered: true,
		})
	})
	start := board.MustNew(4).Start()
	t.Run("merge", func(t *testing.T) {
		runStage(t, "testdata/merge", stageCase[runstore.BucketMerge]{
			stage: (*runstore.Store).MergeStage,
			writes: func(i int, a string) []string {
				return []string{runstore.FinalRunBlobName(1, i, 0, a), runstore.FinalRunBlobName(1, i, 1, a)}
			},
			cover: func(i int, a string) string { return runstore.MergeOutputsName(1, i, a) },
			marker: func(i int, a string, blobs []string) runstore.BucketMerge {
				m := runstore.BucketMerge{Bucket: i, Attempt: a, Segments: 1, Entries: int64(len(blobs)), Outputs: int64(len(blobs))}
				for _, b := range blobs {
					m.Merged = append(m.Merged, &runstore.MergedBlob{Blob: b, Count: 1, Min: start, Max: start})
				}
				return m
			},
			show: func(m runstore.BucketMerge) string {
				return fmt.Sprintf("bucket %d: attempt %s, %d outputs", m.Bucket, m.Attempt, m.Outputs)
			},
			covered: true,
		})
	})
	t.Run("resolution", func(t *testing.T) {
		runStage(t, "testdata/resolution", stageCase[runstore.Resolution]{
			stage:  (*runstore.Store).ResolutionStage,
			writes: func(i int, a string) []string { return []string{runstore.ResultsBlobName(1, i)} },
			marker: func(i int, a string, blobs []string) runstore.Resolution {
				return runstore.Resolution{Index: i, Counts: runstore.Counts{Black: 1}}
			},
			show: func(r runstore.Resolution) string {
				return fmt.Sprintf("final blob %d: %d black wins", r.Index, r.Black)
			},
		})
	})
}

// stageCase is what the interpreter knows of one stage.
type stageCase[M any] struct {
	stage  func(s *runstore.Store, p *runstore.Ply) runstore.Stage[M]
	writes func(item int, attempt string) []string // the blobs an item's work writes
	marker func(item int, attempt string, blobs []string) M
	show   func(M) string
	// covered: the blobs have compensation messages until the marker
	// names them (resolutions write blobs of fixed names instead).
	covered bool
	// cover, when set, names the one compensation message that covers
	// all of an attempt's blobs; otherwise each has its own.
	cover func(item int, attempt string) string
}

// harness is one stage's run: ply 1's records, blobs and work queue.
type harness[M any] struct {
	stageCase[M]
	t     *testing.T
	store *runstore.Store
	task  *task.Task
	now   time.Time // the tasks' clock
}

func runStage[M any](t *testing.T, path string, sc stageCase[M]) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	state, back := be.Table("runstate"), be.Table("runback")
	blobs, work, comps := be.Container("blobs"), be.Queue("work"), be.Queue("compensation")
	for _, c := range []interface{ Create(context.Context) error }{state, back, blobs, work, comps} {
		if err := c.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	store := runstore.New(board.MustNew(4), []storage.Table{state}, []storage.Table{back}, 1, runstore.TreeCompletion)
	h := &harness[M]{stageCase: sc, t: t, store: store, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.task = &task.Task{Run: &task.Run{Store: store, Blobs: blobs, Work: work, Compensation: comps},
		Timing: task.Timing{Visibility: time.Minute, CompensationDelay: time.Hour}, Now: func() time.Time { return h.now }}
	testkit.DataDriven(t, path, func(t *testing.T, c *testkit.Command) string {
		out, err := h.run(ctx, c)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Pos, c.Name, err)
		}
		return out
	})
}

func (h *harness[M]) run(ctx context.Context, c *testkit.Command) (string, error) {
	switch c.Name {
	case "setup":
		return h.setup(ctx, c)
	case "state":
		p, err := h.store.Ply(ctx, 1)
		if err != nil {
			return "", err
		}
		if err := advance(ctx, h.store, p, parseState(h.t, c.Str(h.t, "to")), c.Int(h.t, "finals", 0)); err != nil {
			return "", err
		}
		return fmt.Sprintf("ply 1 is %s", p.State), nil
	case "deliver":
		var trace []string
		err := h.deliver(ctx, c.Int(h.t, "item", 0), c.Str(h.t, "attempt"), c.Args["fail"], c.Args["then"], &trace)
		return strings.Join(trace, "\n"), err
	case "markers":
		st, err := h.stageNow(ctx)
		if err != nil {
			return "", err
		}
		ms, err := st.Markers(ctx)
		var lines []string
		for _, m := range ms {
			lines = append(lines, h.show(m))
		}
		return strings.Join(lines, "\n"), err
	case "all-done", "complete":
		st, err := h.stageNow(ctx)
		if err != nil {
			return "", err
		}
		var all bool
		if c.Name == "complete" {
			all, err = st.Complete(ctx)
		} else {
			all, err = st.AllDone(ctx, c.Int(h.t, "given", 0))
		}
		return fmt.Sprint(all), err
	case "runs":
		p, err := h.store.Ply(ctx, 1)
		if err != nil {
			return "", err
		}
		runs, err := h.store.MergedBlobs(ctx, p)
		var lines []string
		for _, r := range runs {
			lines = append(lines, fmt.Sprintf("bucket %d: attempt %s, %s", r.Bucket, r.Attempt, r.Blob))
		}
		return strings.Join(lines, "\n"), err
	case "blobs":
		return h.blobs(ctx)
	case "surface":
		return h.surface(ctx, c.Int(h.t, "item", 0), c.Str(h.t, "attempt"))
	case "compensations":
		n, err := h.task.Run.Compensation.ApproximateLength(ctx)
		return fmt.Sprint(n), err
	}
	return "", fmt.Errorf("unknown command")
}

// setup records ply 0, then ply 1 with the command's figures, added by
// ply 0's Finish as the flow does, and moves ply 1 to its state.
func (h *harness[M]) setup(ctx context.Context, c *testkit.Command) (string, error) {
	p0, err := h.store.AddFirstPly(ctx, runstore.Claim{Owner: "seed"})
	if err != nil {
		return "", err
	}
	p := &runstore.Ply{Ply: 1, Tasks: c.Int(h.t, "tasks", 1), Buckets: c.Int(h.t, "buckets", 1)}
	if groups := c.Int(h.t, "groups", 0); groups > 0 {
		p.Levels = []runstore.CombineLevel{{Groups: groups, Ranges: c.Int(h.t, "ranges", 0)}}
	}
	if err := h.store.Finish(ctx, p0, runstore.Claim{Owner: "seed"}, runstore.Totals{Finals: 1, Positions: 1}, p); err != nil {
		return "", err
	}
	if p, err = h.store.Ply(ctx, 1); err != nil {
		return "", err
	}
	if err := advance(ctx, h.store, p, parseState(h.t, c.Str(h.t, "state")), c.Int(h.t, "finals", 0)); err != nil {
		return "", err
	}
	return fmt.Sprintf("ply 1 is %s, with %d items", p.State, h.stage(h.store, p).Items()), nil
}

// advance moves p forward through the lifecycle to state to; finals is
// the ply's final blobs, set when it becomes Final.
func advance(ctx context.Context, s *runstore.Store, p *runstore.Ply, to runstore.State, finals int) error {
	for p.State < to {
		var err error
		switch p.State + 1 {
		case runstore.Merging:
			err = s.StartMerging(ctx, p, runstore.Claim{Owner: "test"})
		case runstore.Final:
			err = s.Finish(ctx, p, runstore.Claim{Owner: "test"}, runstore.Totals{Finals: finals}, nil)
		case runstore.Dispatched:
			err = s.MarkDispatched(ctx, p)
		case runstore.Resolved:
			err = s.Resolve(ctx, p, runstore.Claim{Owner: "test"}, runstore.Counts{})
		case runstore.Closed:
			err = s.Close(ctx, p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseState(t *testing.T, name string) runstore.State {
	for s := runstore.Expanding; s <= runstore.Closed; s++ {
		if s.String() == name {
			return s
		}
	}
	t.Fatalf("no state %q", name)
	return 0
}

// stageNow is the stage of ply 1 as its record reads now, as a handler
// makes it.
func (h *harness[M]) stageNow(ctx context.Context) (runstore.Stage[M], error) {
	p, err := h.store.Ply(ctx, 1)
	if err != nil {
		return runstore.Stage[M]{}, err
	}
	return h.stage(h.store, p), nil
}

var (
	errWorkCrash     = errors.New("crash after the work")
	errFollowUpCrash = errors.New("crash in the follow-up")
)

// deliver does item i as attempt a through task.Do, tracing each step.
func (h *harness[M]) deliver(ctx context.Context, i int, a, fail, then string, trace *[]string) error {
	logf := func(format string, args ...any) { *trace = append(*trace, a+": "+fmt.Sprintf(format, args...)) }
	st, err := h.stageNow(ctx)
	if err != nil {
		return err
	}
	worked, won := false, false
	err = task.Do(ctx, task.Item[M]{
		Stage: st,
		Index: i,
		Work: func(ctx context.Context) (M, task.Cover, error) {
			var zero M
			worked = true
			if fail == "requeue" {
				logf("sent its message again")
				return zero, nil, task.ErrRequeued
			}
			blobs := h.writes(i, a)
			covers := blobs
			if h.cover != nil {
				covers = []string{h.cover(i, a)}
			}
			comps := &compensation.Set{}
			for _, c := range covers {
				if !h.covered {
					break
				}
				if err := comps.Cover(ctx, h.task, 1, c); err != nil {
					return zero, nil, err
				}
			}
			for _, blob := range blobs {
				if err := h.task.Run.Blobs.Put(ctx, blob, []byte(a)); err != nil {
					return zero, nil, err
				}
				logf("wrote %s", blob)
			}
			switch fail {
			case "work":
				return zero, nil, errWorkCrash
			case "deadline":
				h.now = h.now.Add(2 * time.Hour)
				logf("ran past its compensation deadline")
			case "surface":
				for _, c := range covers {
					x := message.Message{Kind: message.KindCompensation, Ply: 1, Blob: c}
					if err := compensation.Handler.Handle(ctx, h.task, x); err != nil {
						return zero, nil, err
					}
				}
				gone := 0
				for _, blob := range blobs {
					if _, err := h.task.Run.Blobs.Get(ctx, blob); errors.Is(err, storage.ErrNotFound) {
						gone++
					}
				}
				logf("its compensation message surfaced; blobs gone: %d of %d", gone, len(blobs))
			}
			if then != "" {
				if err := h.deliver(ctx, i, then, "", "", trace); err != nil {
					return zero, nil, err
				}
			}
			return h.marker(i, a, blobs), comps, nil
		},
		Won: func() { won = true },
		FollowUp: func(ctx context.Context) error {
			switch {
			case !worked:
				logf("done already: follow-up only")
			case won:
				logf("won the commit; follow-up")
			default:
				logf("lost to an earlier marker; follow-up")
			}
			if fail == "follow-up" {
				return errFollowUpCrash
			}
			return nil
		},
	})
	switch {
	case err != nil:
		logf("error: %v", err)
	case len(*trace) == 0 || !strings.HasPrefix((*trace)[len(*trace)-1], a+": "):
		logf("nothing to do: a stale duplicate")
	}
	return nil
}

// surface hands the compensation message of item i's attempt a to the
// handler, as when it surfaces, and lists the blobs left of the item.
func (h *harness[M]) surface(ctx context.Context, i int, a string) (string, error) {
	covers := h.writes(i, a)
	if h.cover != nil {
		covers = []string{h.cover(i, a)}
	}
	for _, c := range covers {
		x := message.Message{Kind: message.KindCompensation, Ply: 1, Blob: c}
		if err := compensation.Handler.Handle(ctx, h.task, x); err != nil {
			return "", err
		}
	}
	var left []string
	for _, attempt := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "s"} {
		for _, b := range h.writes(i, attempt) {
			if _, err := h.task.Run.Blobs.Get(ctx, b); err == nil {
				left = append(left, b)
			}
		}
	}
	return "left: " + strings.Join(left, " "), nil
}

// blobs lists every blob and whether it stays (runstore.Store.Keep, the
// rule the compensation handler deletes by).
func (h *harness[M]) blobs(ctx context.Context) (string, error) {
	list, err := h.task.Run.Blobs.List(ctx, "")
	if err != nil {
		return "", err
	}
	var lines []string
	for _, b := range list {
		inUse, err := h.store.Keep(ctx, b.Name)
		if err != nil {
			return "", err
		}
		use := "in use"
		if !inUse {
			use = "orphaned: its compensation message deletes it"
		}
		lines = append(lines, b.Name+": "+use)
	}
	return strings.Join(lines, "\n"), nil
}

package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// auditLines runs an audit and returns its findings as printed.
func auditLines(t *testing.T, ctx context.Context, r *Run) ([]string, *Audit) {
	t.Helper()
	a, err := r.Audit(ctx)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	var out []string
	for _, f := range a.Findings {
		out = append(out, f.String())
	}
	return out, a
}

func expectClean(t *testing.T, ctx context.Context, r *Run, when string) {
	t.Helper()
	lines, a := auditLines(t, ctx, r)
	if len(lines) != 0 || a.Failed() {
		t.Fatalf("%s: audit found %q; want it clean (%s)", when, lines, a.Summary())
	}
}

// runComplete runs a run to its end in this process and opens it.
func runComplete(t *testing.T, ctx context.Context, be storage.Backend, cfg RunConfig) *Run {
	t.Helper()
	wcfg := WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}
	rep, err := RunLocal(ctx, be, cfg, 3, wcfg, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete {
		t.Fatal("the run did not complete")
	}
	r, err := OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	// A task that outlived its compensation deadline on a loaded machine
	// leaves a delayed compensation message behind it.
	settle(t, ctx, r, wcfg)
	return r
}

// drain deletes every visible message of a queue.
func drain(t *testing.T, ctx context.Context, q storage.Queue) {
	t.Helper()
	for {
		msgs, err := q.Dequeue(ctx, storage.MaxDequeue, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			if err := q.Delete(ctx, m.ID, m.PopReceipt); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAuditCompleteRun checks that the audit of a completed run is clean,
// then plants one defect at a time, checks the exact findings, removes the
// defect and checks the audit is clean again.
func TestAuditCompleteRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	r := runComplete(t, ctx, be, RunConfig{Name: "audit", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 4}}})
	expectClean(t, ctx, r, "complete run")

	const ply = 9
	finals, err := r.store.Finals(ctx, ply)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.store.Ply(ctx, ply)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := r.store.MergedBlobs(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(finals) < 2 || len(runs) != len(finals) {
		t.Fatalf("ply %d: %d final blobs and %d runs; the test wants several final blobs", ply, len(finals), len(runs))
	}
	slices.SortFunc(runs, func(a, b *runstore.MergedBlob) int { return compareText(a.Min.Text(), b.Min.Text()) })
	final0 := finals[0].Blob
	orphan := runstore.ExpansionBlobName(ply, 999999, "x")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	overlapping := finals[1]
	overlapping.Min = finals[0].Max
	target0, err := r.store.Final(ctx, 12, 0) // of the target ply, which lists its terminal positions
	if err != nil {
		t.Fatal(err)
	}
	poisoned := "garbage"

	for _, tc := range []struct {
		name  string
		plant func() (undo func())
		want  []string
	}{
		{"orphan blob", func() func() {
			must(r.blobs.Put(ctx, orphan, []byte("x")))
			return func() { must(r.blobs.Delete(ctx, orphan)) }
		}, []string{"error: orphan blob p09/e-0999999-x: no record refers to it"}},

		{"blob outside every ply", func() func() {
			must(r.blobs.Put(ctx, "junk", []byte("x")))
			return func() { must(r.blobs.Delete(ctx, "junk")) }
		}, []string{"error: blob junk belongs to no ply"}},

		{"referenced blob deleted", func() func() {
			data, err := r.blobs.Get(ctx, final0)
			must(err)
			must(r.blobs.Delete(ctx, final0))
			return func() { must(r.blobs.Put(ctx, final0, data)) }
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) is missing", final0)}},

		{"final blob cut short", func() func() {
			data, err := r.blobs.Get(ctx, final0)
			must(err)
			keys, err := packed.DecodeKeys(data)
			must(err)
			short, err := packed.EncodeKeys(keys[:3])
			must(err)
			must(r.blobs.Put(ctx, final0, short))
			return func() { must(r.blobs.Put(ctx, final0, data)) }
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) holds 3 positions, not %d", final0, finals[0].Count)}},

		{"results blob deleted", func() func() {
			name := runstore.ResultsBlobName(ply, 1)
			data, err := r.blobs.Get(ctx, name)
			must(err)
			must(r.blobs.Delete(ctx, name))
			return func() { must(r.blobs.Put(ctx, name, data)) }
		}, []string{"error: ply 9: final blob 1 is resolved but its results blob p09/r-0000001 is missing"}},

		{"backtracking rows deleted", func() func() {
			payload, list, err := r.store.SourcesAndTerminals(ctx, final0)
			must(err)
			must(r.store.DeleteSources(ctx, final0))
			return func() { must(r.store.PutSources(ctx, final0, payload, list)) }
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) has no backtracking rows", final0)}},

		{"terminal list disagrees with its row", func() func() {
			payload, list, err := r.store.SourcesAndTerminals(ctx, target0.Blob)
			must(err)
			l, err := packed.DecodeTerminalList(r.Board, list)
			must(err)
			l.Count++
			must(r.store.PutSources(ctx, target0.Blob, payload, l.Append(nil)))
			return func() { must(r.store.PutSources(ctx, target0.Blob, payload, list)) }
		}, []string{fmt.Sprintf("error: ply 12: final blob 0 (%s) lists %d terminal positions of %d, where its row says %d of %d",
			target0.Blob, target0.Terminal, target0.Count+1, target0.Terminal, target0.Count)}},

		{"overlapping final blobs", func() func() {
			must(r.store.PutFinals(ctx, ply, []runstore.FinalBlob{overlapping}))
			return func() { must(r.store.PutFinals(ctx, ply, []runstore.FinalBlob{finals[1]})) }
		}, []string{fmt.Sprintf("error: ply 9 is complete but final blobs 0 [%s, %s] and 1 [%s, %s] overlap or are out of order",
			finals[0].Min.Text(), finals[0].Max.Text(), overlapping.Min.Text(), overlapping.Max.Text())}},

		{"final blob unreadable", func() func() {
			data, err := r.blobs.Get(ctx, final0)
			must(err)
			must(r.blobs.Put(ctx, final0, []byte(poisoned)))
			return func() { must(r.blobs.Put(ctx, final0, data)) }
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s): %v", final0, keyIndexErr([]byte(poisoned)))}},

		{"results blob unreadable", func() func() {
			name := runstore.ResultsBlobName(ply, 1)
			data, err := r.blobs.Get(ctx, name)
			must(err)
			must(r.blobs.Put(ctx, name, []byte(poisoned)))
			return func() { must(r.blobs.Put(ctx, name, data)) }
		}, []string{fmt.Sprintf("error: ply 9: results blob p09/r-0000001: %v", resultsErr([]byte(poisoned)))}},

		{"results blob short", func() func() {
			name := runstore.ResultsBlobName(ply, 1)
			data, err := r.blobs.Get(ctx, name)
			must(err)
			words, err := packed.DecodeResults(nil, data)
			must(err)
			must(r.blobs.Put(ctx, name, packed.EncodeResults(words[:1])))
			return func() { must(r.blobs.Put(ctx, name, data)) }
		}, []string{fmt.Sprintf("error: ply 9: results blob p09/r-0000001 holds 1 results, not %d", finals[1].Count)}},

		{"leftover message", func() func() {
			_, err := r.work.Enqueue(ctx, "S05", storage.EnqueueOptions{})
			must(err)
			return func() { drain(t, ctx, r.work) }
		}, []string{`error: work queue: message "S05" left in a complete run (dequeued 0 times)`}},

		{"orphan covered by a visible compensation message", func() func() {
			must(r.blobs.Put(ctx, orphan, []byte("x")))
			_, err := r.work.Enqueue(ctx, "X09-"+orphan, storage.EnqueueOptions{})
			must(err)
			return func() { drain(t, ctx, r.work); must(r.blobs.Delete(ctx, orphan)) }
		}, []string{`error: work queue: message "X09-p09/e-0999999-x" left in a complete run (dequeued 0 times)`}},

		{"orphan a delayed compensation message may cover", func() func() {
			must(r.blobs.Put(ctx, orphan, []byte("x")))
			rc, err := r.work.Enqueue(ctx, "X09-"+orphan, storage.EnqueueOptions{Delay: time.Hour})
			must(err)
			return func() { must(r.work.Delete(ctx, rc.ID, rc.PopReceipt)); must(r.blobs.Delete(ctx, orphan)) }
		}, []string{
			"warning: blob p09/e-0999999-x is unreferenced (a compensation may still be pending)",
			"error: work queue: 1 more messages left in a complete run, not visible (delayed compensation messages or tasks in flight)",
		}},

		{"poison message", func() func() {
			_, err := r.work.Enqueue(ctx, poisoned, storage.EnqueueOptions{})
			must(err)
			w, err := NewWorker(r, WorkerConfig{Visibility: 5 * time.Second, ExitWhenDone: true, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
			must(err)
			w.Run(ctx)
			return func() { drain(t, ctx, r.poison) }
		}, []string{`error: poison queue: message "garbage": bad message: message "garbage": the ply must be two digits`}},
		{"poison record unreadable", func() func() {
			_, err := r.poison.Enqueue(ctx, poisoned, storage.EnqueueOptions{})
			must(err)
			return func() { drain(t, ctx, r.poison) }
		}, []string{`error: poison queue: message "garbage"`}},

		{"more poison than a peek shows", func() func() {
			for range storage.MaxDequeue + 1 {
				_, err := r.poison.Enqueue(ctx, poisoned, storage.EnqueueOptions{})
				must(err)
			}
			return func() { drain(t, ctx, r.poison) }
		}, append(slices.Repeat([]string{`error: poison queue: message "garbage"`}, storage.MaxDequeue), "error: poison queue: 1 more messages")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			undo := tc.plant()
			got, a := auditLines(t, ctx, r)
			wantFail := slices.ContainsFunc(tc.want, func(s string) bool { return s[:6] == "error:" })
			if !slices.Equal(got, tc.want) || a.Failed() != wantFail {
				t.Errorf("findings %q (failed %v), want %q", got, a.Failed(), tc.want)
			}
			undo()
			expectClean(t, ctx, r, "after undoing "+tc.name)
		})
	}
}

// keyIndexErr is what reading data as a final blob fails with.
func keyIndexErr(data []byte) error {
	_, err := packed.OpenKeyIndex(bytes.NewReader(data), int64(len(data)))
	return err
}

// resultsErr is what reading data as a results blob fails with.
func resultsErr(data []byte) error {
	_, err := packed.DecodeResults(nil, data)
	return err
}

// TestAuditRecords: damage to a complete ply's records that the run
// store never writes (its rows are added once and never rewritten or
// deleted) is planted in the records as the audit read them, one at a
// time, and each is reported.
func TestAuditRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := runComplete(t, ctx, teststore.Embedded(t), RunConfig{Name: "auditrecs", Config: runstore.Config{Board: 4, Target: 10, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 4}}})
	const ply = 9
	list, err := r.blobs.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for _, b := range list {
		sizes[b.Name] = b.Size
	}
	read := func() (*auditState, *runstore.Ply, runstore.Records) {
		s, err := r.readAuditState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := *s.plies[ply]
		return s, &p, s.recs[ply]
	}
	_, first, recs := read()
	if first.Combining() || len(recs.Finals) < 2 {
		t.Fatalf("ply %d: combine levels %v, %d final blobs; the test wants no combine level and several final blobs", ply, first.Levels, len(recs.Finals))
	}
	final0 := recs.Finals[0].Blob
	results := runstore.ResultsBlobName(ply, 0)
	for _, tc := range []struct {
		name   string
		mangle func(s *auditState, p *runstore.Ply, recs *runstore.Records)
		want   []string
	}{
		{"clean", func(*auditState, *runstore.Ply, *runstore.Records) {}, nil},
		{"final blob rows against the ply record", func(_ *auditState, p *runstore.Ply, _ *runstore.Records) { p.Finals++ },
			[]string{fmt.Sprintf("error: ply 9 has %d final blob rows, but its record says %d", len(recs.Finals), len(recs.Finals)+1)}},
		{"final blob without its run", func(_ *auditState, _ *runstore.Ply, recs *runstore.Records) {
			recs.Merged = slices.DeleteFunc(slices.Clone(recs.Merged), func(run *runstore.MergedBlob) bool { return run.Blob == final0 })
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) has no merged blob row", final0)}},
		{"run naming no final blob", func(_ *auditState, _ *runstore.Ply, recs *runstore.Records) {
			recs.Merged = slices.Clone(recs.Merged)
			for i, run := range recs.Merged {
				if run.Blob == final0 {
					moved := *run
					moved.Blob = results
					recs.Merged[i] = &moved
				}
			}
		}, []string{
			fmt.Sprintf("error: ply 9 is final but merged blob row %s names blob %s, which is not one of its final blobs", runKey(recs.Merged, final0), results),
			fmt.Sprintf("error: ply 9: final blob 0 (%s) has no merged blob row", final0),
		}},
		{"resolution of a final blob the ply lacks", func(s *auditState, _ *runstore.Ply, _ *runstore.Records) {
			s.resolutions[ply] = append(slices.Clone(s.resolutions[ply]), runstore.Resolution{Index: len(recs.Finals)})
		}, []string{fmt.Sprintf("error: ply 9: a resolution marker names final blob %d, which the ply lacks", len(recs.Finals))}},
		{"combine marker without a combine level", func(_ *auditState, _ *runstore.Ply, recs *runstore.Records) {
			recs.Combines = []runstore.Combine{{Index: 3}}
		}, []string{"error: ply 9: a combine marker names task 3 of level 1, which the ply's combine levels [] lack"}},
	} {
		s, p, recs := read()
		tc.mangle(s, p, &recs)
		s.recs[ply] = recs
		a := &Audit{}
		if err := r.auditPly(ctx, a, p, s, sizes, nil); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range a.Findings {
			got = append(got, f.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: findings %q, want %q", tc.name, got, tc.want)
		}
	}
}

// runKey is the key of the run that names blob.
func runKey(runs []*runstore.MergedBlob, blob string) string {
	for _, run := range runs {
		if run.Blob == blob {
			return run.Key
		}
	}
	return ""
}

func compareText(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestAudit6x6 checks a 6x6 run of a few plies is clean.
func TestAudit6x6(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := runComplete(t, ctx, teststore.Embedded(t), RunConfig{Name: "auditsix", Config: runstore.Config{Board: 6, Target: 6, Sizes: runstore.Sizes{BlobPositions: 300, BucketBlobs: 3}}})
	expectClean(t, ctx, r, "6x6 through ply 6")
}

// TestAuditRunInProgress checks a run that is seeded but not worked on:
// clean while its first message waits; damage planted in the records
// of its open ply 1 is found, each on a run of its own since markers are
// never removed; and with the message gone, the audit says nothing is
// left to make progress.
func TestAuditRunInProgress(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	blob := runstore.ExpansionBlobName(1, 0, "x")
	for i, tc := range []struct {
		name  string
		plant func(r *Run, p *runstore.Ply) error
		want  string
	}{
		{"expansion blob missing", func(r *Run, p *runstore.Ply) error {
			return commitExpansion(ctx, r, p, runstore.Expansion{Task: 0, Blob: blob, Cuts: []int64{0, 50}})
		}, "error: ply 1: expansion task 0 names blob p01/e-0000000-x, which is missing"},
		{"expansion marker without cuts", func(r *Run, p *runstore.Ply) error {
			if err := r.blobs.Put(ctx, blob, make([]byte, 50)); err != nil {
				return err
			}
			return commitExpansion(ctx, r, p, runstore.Expansion{Task: 0, Blob: blob})
		}, "error: ply 1: expansion task 0 names blob p01/e-0000000-x but records no cuts"},
		{"expansion blob short", func(r *Run, p *runstore.Ply) error {
			if err := r.blobs.Put(ctx, blob, make([]byte, 30)); err != nil {
				return err
			}
			return commitExpansion(ctx, r, p, runstore.Expansion{Task: 0, Blob: blob, Cuts: []int64{0, 50}})
		}, "error: ply 1: expansion task 0 cuts blob p01/e-0000000-x into buckets ending at 50, but it holds 30 bytes"},
		{"expansion cut into too many buckets", func(r *Run, p *runstore.Ply) error {
			if err := r.blobs.Put(ctx, blob, make([]byte, 50)); err != nil {
				return err
			}
			cuts := make([]int64, p.Buckets+2)
			cuts[len(cuts)-1] = 50
			return commitExpansion(ctx, r, p, runstore.Expansion{Task: 0, Blob: blob, Cuts: cuts})
		}, "error: ply 1: expansion task 0 cuts blob p01/e-0000000-x into 2 buckets, but it should be 1"},
		{"merge output missing", func(r *Run, p *runstore.Ply) error {
			out := &runstore.MergedBlob{Blob: runstore.FinalRunBlobName(1, 0, 0, "x"), Count: 1}
			_, err := r.store.MergeStage(p).Commit(ctx, runstore.BucketMerge{Bucket: 0, Attempt: "x", Outputs: 1, Merged: []*runstore.MergedBlob{out}})
			return err
		}, "error: ply 1: merged blob row s000000-x-0000 names blob p01/f-000000-0000-x, which is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Seed(ctx, be, RunConfig{Name: fmt.Sprintf("auditseed%d", i), Config: runstore.Config{Board: 4, Target: 12}})
			if err != nil {
				t.Fatal(err)
			}
			expectClean(t, ctx, r, "seeded run")
			p, err := r.store.Ply(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if p.Buckets != 1 {
				t.Fatalf("ply 1 has %d buckets; the findings expect 1", p.Buckets)
			}
			if err := tc.plant(r, p); err != nil {
				t.Fatal(err)
			}
			got, a := auditLines(t, ctx, r)
			if want := []string{tc.want}; !slices.Equal(got, want) || !a.Failed() {
				t.Errorf("findings %q, want %q", got, want)
			}
			drain(t, ctx, r.work)
			got, _ = auditLines(t, ctx, r)
			want := []string{tc.want, "error: the run is not complete but its work queue is empty: nothing is left to make progress"}
			if !slices.Equal(got, want) {
				t.Errorf("with the queue drained: findings %q, want %q", got, want)
			}
		})
	}
}

// commitExpansion commits an expansion marker that no task made, as
// damage would.
func commitExpansion(ctx context.Context, r *Run, p *runstore.Ply, e runstore.Expansion) error {
	_, err := r.store.ExpansionStage(p).Commit(ctx, e)
	return err
}

// TestAuditWhileRunning audits a run over and over while its workers run:
// live work (blobs written but not yet named, runs merged but not yet
// swept, runs released as the level above combines them, plies
// completing) must never be reported as an error, and once the run is
// complete and its queue empty the audit is clean. The second run has a
// fan-in of 2, so its later plies have several combine levels.
func TestAuditWhileRunning(t *testing.T) {
	for _, sizes := range []runstore.Sizes{{BlobPositions: 200, BucketBlobs: 3}, {BlobPositions: 40, BucketBlobs: 2, MergeFanIn: 2}} {
		t.Run(fmt.Sprintf("fan-in %d", sizes.MergeFanIn), func(t *testing.T) { auditWhileRunning(t, sizes) })
	}
}

func auditWhileRunning(t *testing.T, sizes runstore.Sizes) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "auditlive", Config: runstore.Config{Board: 6, Target: 7, Sizes: sizes}}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
		done <- err
	}()
	audits, warnings := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		a, err := r.Audit(ctx)
		if err != nil {
			t.Fatalf("audit %d: %v", audits, err)
		}
		audits++
		if a.Complete {
			continue // the last tasks may still hold their messages: checked once settled
		}
		for _, f := range a.Findings {
			if !f.Warning {
				t.Errorf("audit %d (%s): %s", audits, a.Summary(), f)
			} else {
				warnings++
			}
		}
	}
	t.Logf("%d audits during the run, %d warnings", audits, warnings)
	settle(t, ctx, r, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond})
	expectClean(t, ctx, r, "after the run")
	plies, err := r.store.Plies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deepest := 0
	for _, p := range plies {
		deepest = max(deepest, len(p.Levels))
	}
	if want := min(2, sizes.MergeFanIn); deepest < want {
		t.Errorf("the deepest ply had %d combine levels; the test wants %d", deepest, want)
	}
}

// TestAuditCuts: a run of edges cut into buckets (an expansion or
// combine marker) is checked against its blob, and each corruption is
// reported in one line, a marker without cuts included (it used to
// panic).
func TestAuditCuts(t *testing.T) {
	sizes := map[string]int64{"p05/e-0000001-a": 300}
	for _, tc := range []struct {
		name    string
		blob    string
		cuts    []int64
		buckets int
		spent   bool
		want    string
	}{
		{"sound", "p05/e-0000001-a", []int64{0, 100, 300}, 2, false, ""},
		{"missing blob", "p05/e-0000002-a", []int64{0, 300}, 1, false, "task 1 names blob p05/e-0000002-a, which is missing"},
		{"spent and deleted", "p05/e-0000002-a", []int64{0, 300}, 1, true, ""},
		{"spent, not yet deleted", "p05/e-0000001-a", []int64{0, 100, 300}, 2, true, ""},
		{"spent, no cuts", "p05/e-0000002-a", nil, 1, true, "task 1 names blob p05/e-0000002-a but records no cuts"},
		{"no cuts", "p05/e-0000001-a", nil, 2, false, "task 1 names blob p05/e-0000001-a but records no cuts"},
		{"short", "p05/e-0000001-a", []int64{0, 100, 200}, 2, false, "task 1 cuts blob p05/e-0000001-a into buckets ending at 200, but it holds 300 bytes"},
		{"other buckets", "p05/e-0000001-a", []int64{0, 300}, 2, false, "task 1 cuts blob p05/e-0000001-a into 1 buckets, but it should be 2"},
	} {
		a := &Audit{}
		auditCuts(a, "task 1", tc.blob, tc.cuts, tc.buckets, sizes, tc.spent)
		var got string
		if len(a.Findings) > 1 {
			t.Errorf("%s: %d findings: %v", tc.name, len(a.Findings), a.Findings)
		} else if len(a.Findings) == 1 {
			got = a.Findings[0].Text
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAuditReport: a report lists the errors as problems, an empty list
// (not null) when there are none, and the warnings apart.
func TestAuditReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		findings []Finding
		want     string
	}{
		{"clean", nil, `{"problems":[],"summary":"check clean: run in progress; 0 plies, 0 records, 0 blobs, 0 work messages, 0 poison messages"}`},
		{"findings", []Finding{{Text: "a"}, {Warning: true, Text: "b"}, {Text: "c"}},
			`{"problems":["a","c"],"warnings":["b"],"summary":"check 2 errors, 1 warnings: run in progress; 0 plies, 0 records, 0 blobs, 0 work messages, 0 poison messages"}`},
	} {
		b, err := json.Marshal((&Audit{Findings: tc.findings}).Report())
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
	}
}

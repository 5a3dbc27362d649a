package pipeline

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
	wcfg := WorkerConfig{Visibility: 5 * time.Second, WorkerID: "t", PollMax: 50 * time.Millisecond}
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
	be := openEmbedded(t)
	r := runComplete(t, ctx, be, RunConfig{Name: "audit", Board: 4, Target: 12, BlobPositions: 100, FanIn: 4})
	expectClean(t, ctx, r, "complete run")

	const ply = 9
	p, err := r.getPly(ctx, ply)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := r.listRecords(ctx, ply)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Blobs) < 2 || len(recs) != len(p.Blobs) {
		t.Fatalf("ply %d: %d blobs and %d records; the test wants several final blobs", ply, len(p.Blobs), len(recs))
	}
	slices.SortFunc(recs, func(a, b *rangeRecord) int { return compareText(a.Min.Text(), b.Min.Text()) })
	final0 := p.Blobs[0]
	orphan := blobFor(ply, "e-999999")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dup := *recs[0]
	dup.ID = "szz" // sorts after every real run ID
	poisoned := "garbage"

	for _, tc := range []struct {
		name  string
		plant func() (undo func())
		want  []string
	}{
		{"orphan blob", func() func() {
			must(r.blobs.Put(ctx, orphan, []byte("x")))
			return func() { must(r.blobs.Delete(ctx, orphan)) }
		}, []string{"error: orphan blob p09/e-999999: no record refers to it"}},

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

		{"final blob truncated", func() func() {
			data, err := r.blobs.Get(ctx, final0)
			must(err)
			must(r.blobs.Put(ctx, final0, data[:len(data)-1]))
			return func() { must(r.blobs.Put(ctx, final0, data)) }
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) holds %d bytes, not %d positions of 17 bytes", final0, p.Counts[0]*17-1, p.Counts[0])}},

		{"results blob deleted", func() func() {
			data, err := r.blobs.Get(ctx, resultBlob(ply, 1))
			must(err)
			must(r.blobs.Delete(ctx, resultBlob(ply, 1)))
			return func() { must(r.blobs.Put(ctx, resultBlob(ply, 1), data)) }
		}, []string{"error: ply 9: final blob 1 is resolved but its results blob p09/r-000001 is missing"}},

		{"backtracking rows deleted", func() func() {
			pk := backPartition(final0)
			rows, err := queryAll(ctx, r.back, pk, "", "")
			must(err)
			for _, e := range rows {
				must(r.back.Delete(ctx, pk, e.RowKey, storage.AnyETag))
			}
			return func() {
				for _, e := range rows {
					_, err := r.back.Add(ctx, e)
					must(err)
				}
			}
		}, []string{fmt.Sprintf("error: ply 9: final blob 0 (%s) has no backtracking rows", final0)}},

		{"overlapping record", func() func() {
			_, err := r.state.Add(ctx, dup.entity(ply))
			must(err)
			return func() { must(r.state.Delete(ctx, pkRecords(ply), dup.ID, storage.AnyETag)) }
		}, []string{fmt.Sprintf("error: ply 9 is complete but records %s [%s, %s] and szz [%s, %s] overlap",
			recs[0].ID, recs[0].Min.Text(), recs[0].Max.Text(), recs[0].Min.Text(), recs[0].Max.Text())}},

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
		}, []string{`error: work queue: message "X09-p09/e-999999" left in a complete run (dequeued 0 times)`}},

		{"orphan a delayed compensation message may cover", func() func() {
			must(r.blobs.Put(ctx, orphan, []byte("x")))
			rc, err := r.work.Enqueue(ctx, "X09-"+orphan, storage.EnqueueOptions{Delay: time.Hour})
			must(err)
			return func() { must(r.work.Delete(ctx, rc.ID, rc.PopReceipt)); must(r.blobs.Delete(ctx, orphan)) }
		}, []string{
			"warning: blob p09/e-999999 is unreferenced (a compensation may still be pending)",
			"error: work queue: 1 more messages left in a complete run, not visible (delayed compensation messages or tasks in flight)",
		}},

		{"poison message", func() func() {
			_, err := r.work.Enqueue(ctx, poisoned, storage.EnqueueOptions{})
			must(err)
			w, err := NewWorker(r, WorkerConfig{Visibility: 5 * time.Second, ExitWhenDone: true, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
			must(err)
			must(w.Run(ctx))
			return func() { drain(t, ctx, r.poison) }
		}, []string{`error: poison queue: message "garbage": bad message: message "garbage": the ply must be two digits`}},
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
	r := runComplete(t, ctx, openEmbedded(t), RunConfig{Name: "auditsix", Board: 6, Target: 6, BlobPositions: 300, FanIn: 3})
	expectClean(t, ctx, r, "6x6 through ply 6")
}

// TestAuditRunInProgress checks a run that is seeded but not worked on:
// clean while its first message waits; a record of the open ply whose
// blob is missing is found; and with the message gone, the audit says
// nothing is left to make progress.
func TestAuditRunInProgress(t *testing.T) {
	ctx := context.Background()
	be := openEmbedded(t)
	r, err := Seed(ctx, be, RunConfig{Name: "auditseed", Board: 4, Target: 12})
	if err != nil {
		t.Fatal(err)
	}
	expectClean(t, ctx, r, "seeded run")

	start := r.Board.Canonical(r.Board.Start())
	rr := &rangeRecord{ID: segmentID(0, 9), Blob: blobFor(1, "e-000009"), Len: 34, Count: 2, Min: start, Max: start}
	if _, err := r.state.Add(ctx, rr.entity(1)); err != nil {
		t.Fatal(err)
	}
	got, a := auditLines(t, ctx, r)
	want := []string{"error: ply 1: record s00000-000009 names blob p01/e-000009, which is missing"}
	if !slices.Equal(got, want) || !a.Failed() {
		t.Errorf("findings %q, want %q", got, want)
	}
	if err := r.state.Delete(ctx, pkRecords(1), rr.ID, storage.AnyETag); err != nil {
		t.Fatal(err)
	}

	drain(t, ctx, r.work)
	got, _ = auditLines(t, ctx, r)
	want = []string{"error: the run is not complete but its work queue is empty: nothing is left to make progress"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestAuditWhileRunning audits a run over and over while its workers run:
// live work (blobs written but not yet named, runs merged but not yet
// swept, plies completing) must never be reported as an error, and once
// the run is complete and its queue empty the audit is clean.
func TestAuditWhileRunning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := openEmbedded(t)
	cfg := RunConfig{Name: "auditlive", Board: 6, Target: 7, BlobPositions: 200, FanIn: 3}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := RunLocal(ctx, be, cfg, 2, WorkerConfig{Visibility: 5 * time.Second, WorkerID: "t", PollMax: 50 * time.Millisecond}, testLogger(t), nil)
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
	settle(t, ctx, r, WorkerConfig{Visibility: 5 * time.Second, WorkerID: "t", PollMax: 50 * time.Millisecond})
	expectClean(t, ctx, r, "after the run")
}

package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
)

// TestMetricsReadTheirSources drives real storage calls and progress
// counters and checks that the exposition shows exactly those figures,
// read at scrape time, and that every name passes promlint.
func TestMetricsReadTheirSources(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	progress := &pipeline.Progress{}
	m := New(Sources{Storage: be, Progress: progress})

	q := be.Queue("qqq")
	c := be.Container("ccc")
	if err := q.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(storage.WithCategory(ctx, "dedup")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(storage.WithCategory(ctx, "dedup"), "b", []byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := q.Enqueue(ctx, "hello", storage.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	progress.Add(7, 11)
	progress.Merges.Add(2)
	progress.Poisoned.Add(1)
	m.TaskDone("merge", pipeline.OutcomeOK, 30*time.Millisecond)
	m.TaskDone("merge", pipeline.OutcomeOK, 2*time.Second)
	m.TaskDone("scan", pipeline.OutcomeLeaseLost, time.Millisecond)

	want := `
# HELP reversi_storage_transactions_total Billed storage transactions, by service (blob, queue, table), operation and category (what the caller was doing; other if unlabelled).
# TYPE reversi_storage_transactions_total counter
reversi_storage_transactions_total{category="dedup",operation="create",service="blob"} 1
reversi_storage_transactions_total{category="dedup",operation="put",service="blob"} 1
reversi_storage_transactions_total{category="other",operation="get",service="blob"} 1
reversi_storage_transactions_total{category="other",operation="create",service="queue"} 1
reversi_storage_transactions_total{category="other",operation="enqueue",service="queue"} 3
# HELP reversi_edges_total Edges (parent-child moves) found by this process.
# TYPE reversi_edges_total counter
reversi_edges_total 11
# HELP reversi_positions_expanded_total Positions expanded (their moves generated) by this process.
# TYPE reversi_positions_expanded_total counter
reversi_positions_expanded_total 7
# HELP reversi_merges_total Merges of sorted runs done by this process.
# TYPE reversi_merges_total counter
reversi_merges_total 2
# HELP reversi_poison_messages_total Messages this process moved to the poison queue.
# TYPE reversi_poison_messages_total counter
reversi_poison_messages_total 1
# HELP reversi_messages_handled_total Work messages handled, by message kind and outcome (ok, failed, poison, lease_lost, cancelled, throttled).
# TYPE reversi_messages_handled_total counter
reversi_messages_handled_total{kind="merge",outcome="ok"} 2
reversi_messages_handled_total{kind="scan",outcome="lease_lost"} 1
`
	names := []string{"reversi_storage_transactions_total", "reversi_edges_total", "reversi_positions_expanded_total",
		"reversi_merges_total", "reversi_poison_messages_total", "reversi_messages_handled_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	s := be.Stats()
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"reversi_storage_written_bytes_total", float64(s.BytesWritten)},
		{"reversi_storage_read_bytes_total", float64(s.BytesRead)},
	} {
		got := gatherValue(t, m, tc.name)
		if got != tc.want || got == 0 {
			t.Errorf("%s = %v, want %v (non-zero)", tc.name, got, tc.want)
		}
	}
	// 30 ms falls in the 0.08 s bucket, 2 s in the 5.12 s one.
	if n := testutil.CollectAndCount(m.duration); n != 2 {
		t.Errorf("%d duration series, want 2 (merge and scan)", n)
	}
	hist := `
# HELP reversi_task_duration_seconds Time spent handling one work message, by message kind, whatever the outcome.
# TYPE reversi_task_duration_seconds histogram
reversi_task_duration_seconds_bucket{kind="merge",le="0.005"} 0
reversi_task_duration_seconds_bucket{kind="merge",le="0.02"} 0
reversi_task_duration_seconds_bucket{kind="merge",le="0.08"} 1
reversi_task_duration_seconds_bucket{kind="merge",le="0.32"} 1
reversi_task_duration_seconds_bucket{kind="merge",le="1.28"} 1
reversi_task_duration_seconds_bucket{kind="merge",le="5.12"} 2
reversi_task_duration_seconds_bucket{kind="merge",le="20.48"} 2
reversi_task_duration_seconds_bucket{kind="merge",le="81.92"} 2
reversi_task_duration_seconds_bucket{kind="merge",le="327.68"} 2
reversi_task_duration_seconds_bucket{kind="merge",le="+Inf"} 2
reversi_task_duration_seconds_sum{kind="merge"} 2.03
reversi_task_duration_seconds_count{kind="merge"} 2
reversi_task_duration_seconds_bucket{kind="scan",le="0.005"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="0.02"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="0.08"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="0.32"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="1.28"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="5.12"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="20.48"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="81.92"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="327.68"} 1
reversi_task_duration_seconds_bucket{kind="scan",le="+Inf"} 1
reversi_task_duration_seconds_sum{kind="scan"} 0.001
reversi_task_duration_seconds_count{kind="scan"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(hist), "reversi_task_duration_seconds"); err != nil {
		t.Error(err)
	}

	// Counts move between scrapes: the collector reads Stats each time.
	before := gatherValue(t, m, "reversi_storage_written_bytes_total")
	if _, err := q.Enqueue(ctx, "more", storage.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := gatherValue(t, m, "reversi_storage_written_bytes_total"); after != before+4 {
		t.Errorf("written bytes %v after a 4-byte message, want %v", after, before+4)
	}

	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func gatherValue(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			var sum float64
			for _, mm := range mf.GetMetric() {
				sum += mm.GetCounter().GetValue()
			}
			return sum
		}
	}
	t.Fatalf("%s not gathered", name)
	return 0
}

// TestHandlerServesTextFormat checks the HTTP handler end to end.
func TestHandlerServesTextFormat(t *testing.T) {
	m := New(Sources{})
	m.TaskDone("inline", pipeline.OutcomeOK, time.Millisecond)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `reversi_messages_handled_total{kind="inline",outcome="ok"} 1`) || !strings.Contains(string(b), "go_goroutines") {
		t.Errorf("status %d, body:\n%s", resp.StatusCode, b)
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage/azure"
)

// scrape is one reading of /metrics.
type scrape struct {
	raw      []byte
	families map[string]*dto.MetricFamily
}

// sum adds up a counter (or a histogram's sample count) over the series
// whose labels include match.
func (s scrape) sum(name string, match map[string]string) float64 {
	mf := s.families[name]
	if mf == nil {
		return 0
	}
	var n float64
next:
	for _, m := range mf.GetMetric() {
		for k, v := range match {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		if h := m.GetHistogram(); h != nil {
			n += float64(h.GetSampleCount())
		} else {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

func getMetrics(url string) (scrape, error) {
	resp, err := http.Get(url)
	if err != nil {
		return scrape{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return scrape{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return scrape{}, fmt.Errorf("parsing /metrics: %w", err)
	}
	return scrape{raw: raw, families: fams}, nil
}

// workerLog collects a worker's JSON log lines as they arrive.
type workerLog struct {
	mu    sync.Mutex
	lines []map[string]any
	bad   []string
	addr  chan string
}

func (l *workerLog) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		l.mu.Lock()
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			l.bad = append(l.bad, sc.Text())
		} else {
			l.lines = append(l.lines, line)
			if line["msg"] == "serving metrics" {
				l.addr <- line["addr"].(string)
			}
		}
		l.mu.Unlock()
	}
}

// resolvedPlyZero reports whether a "task done" line says the resolution
// of ply 0 was handled: the message that completes the run, whose
// handler marks it complete before it ends and its message is deleted.
func (l *workerLog) resolvedPlyZero() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if line["msg"] == "task done" && line["kind"] == "resolve" && line["ply"] == 0.0 {
			return true
		}
	}
	return false
}

// taskDone counts "task done" lines by kind.
func (l *workerLog) taskDone() map[string]float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]float64{}
	for _, line := range l.lines {
		if line["msg"] == "task done" {
			n[fmt.Sprint(line["kind"])]++
		}
	}
	return n
}

// TestWorkerMetricsAndLogs runs cmd/worker -metrics-addr on a free port
// against a seeded 4x4 run on Azurite, scrapes /metrics while the run is
// in progress and after it completes, and checks that the counters move,
// that the totals match the reference counts and the worker's own log,
// that the exposition passes promlint, and that every log line about a
// message carries the run, ply, kind and message id.
func TestWorkerMetricsAndLogs(t *testing.T) {
	cs := azurite(t)
	bin := binaries(t)
	run := runName("m")
	// Ply 9 is the first 4x4 ply expanded from blobs (C messages), with
	// merges before it and results resolved back from it.
	const target = 9
	if out, err := command(bin, "seed", "-run", run, "-board", "4", "-plies", fmt.Sprint(target), "-blob-positions", "500", "-bucket-blobs", "4").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	// No -exit-when-done: the worker stays up after the run, so the last
	// scrape sees every count, and it is stopped the way a platform would.
	w := command(bin, "worker", "-run", run, "-metrics-addr", "127.0.0.1:0", "-log-level", "debug", "-visibility", "20s", "-id", "m0")
	stderr, err := w.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	wlog := &workerLog{addr: make(chan string, 1)}
	readDone := make(chan struct{})
	go func() { defer close(readDone); wlog.read(stderr) }()
	exited := make(chan error, 1)
	go func() { <-readDone; exited <- w.Wait() }()
	defer w.Process.Kill() // if the test fails early; harmless once it has exited

	var url string
	select {
	case addr := <-wlog.addr:
		url = "http://" + addr + "/metrics"
	case err := <-exited:
		t.Fatalf("worker exited before serving metrics: %v; bad lines %q", err, wlog.bad)
	case <-time.After(time.Minute):
		t.Fatal("no \"serving metrics\" line within a minute")
	}

	ctx := context.Background()
	cfg, err := azure.ConfigFromEnv(func(k string) string {
		if k == "AZURE_STORAGE_CONNECTION_STRING" {
			return cs
		}
		return os.Getenv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	be, err := azure.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	r, err := pipeline.OpenRun(ctx, be, run)
	if err != nil {
		t.Fatal(err)
	}

	const handled, txs = "reversi_messages_handled_total", "reversi_storage_transactions_total"
	first, err := getMetrics(url)
	if err != nil {
		t.Fatal(err)
	}
	// Scrape until the run is complete. A scrape followed by "not done
	// yet" was taken during the run.
	scrapes := []scrape{first}
	var during []scrape
	deadline := time.Now().Add(5 * time.Minute)
	for {
		s, err := getMetrics(url)
		if err != nil {
			t.Fatal(err)
		}
		prev := scrapes[len(scrapes)-1]
		for _, name := range []string{handled, txs, "reversi_storage_written_bytes_total", "reversi_edges_total"} {
			if s.sum(name, nil) < prev.sum(name, nil) {
				t.Errorf("%s went down from %v to %v", name, prev.sum(name, nil), s.sum(name, nil))
			}
		}
		scrapes = append(scrapes, s)
		done, err := r.Done(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if done != nil {
			break
		}
		during = append(during, s)
		if time.Now().After(deadline) {
			t.Fatal("the run did not complete within 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	moved := 0
	for _, s := range during {
		if s.sum(handled, nil) > first.sum(handled, nil) && s.sum(txs, nil) > first.sum(txs, nil) {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no scrape during the run (%d taken) showed messages handled and transactions above the first scrape's", len(during))
	}

	// The last task's log line and count follow the run's completion;
	// wait until the log has it (its message is deleted then) and the
	// metrics agree with the log, then take the last scrape. Metrics and
	// log agreed before it too, and a SIGTERM then stopped the last
	// handling and gave its message back, left in the complete run.
	var last scrape
	for {
		if last, err = getMetrics(url); err != nil {
			t.Fatal(err)
		}
		logged := wlog.taskDone()
		agree := true
		var total float64
		for kind, n := range logged {
			total += n
			if last.sum(handled, map[string]string{"kind": kind, "outcome": "ok"}) != n {
				agree = false
			}
		}
		if agree && last.sum(handled, map[string]string{"outcome": "ok"}) == total && wlog.resolvedPlyZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never agreed with the log: log %v\n%s", logged, last.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d scrapes, %d during the run (%d showing movement); final messages handled %v, storage transactions %v",
		len(scrapes)+1, len(during), moved, last.sum(handled, nil), last.sum(txs, nil))

	var refEdges float64
	for _, p := range testkit.Ref4x4[:target+1] {
		refEdges += float64(p[2])
	}
	for _, tc := range []struct {
		name  string
		match map[string]string
		check func(v float64) bool
		want  string
	}{
		{"reversi_edges_total", nil, func(v float64) bool { return v == refEdges }, fmt.Sprint(refEdges, " (docs/reference.md)")},
		{"reversi_positions_expanded_total", nil, func(v float64) bool { return v > 0 }, "> 0"},
		{"reversi_merges_total", nil, func(v float64) bool { return v > 0 }, "> 0"},
		{"reversi_poison_messages_total", nil, func(v float64) bool { return v == 0 }, "0"},
		{handled, map[string]string{"outcome": "ok"}, func(v float64) bool { return v == last.sum(handled, nil) }, "all handled messages"},
		{"reversi_task_duration_seconds", nil, func(v float64) bool { return v == last.sum(handled, nil) }, "one sample per message"},
		{txs, map[string]string{"service": "queue", "operation": "dequeue"}, func(v float64) bool { return v >= last.sum(handled, nil) }, ">= messages handled"},
		{txs, map[string]string{"service": "blob"}, func(v float64) bool { return v > 0 }, "> 0"},
		{txs, map[string]string{"service": "table"}, func(v float64) bool { return v > 0 }, "> 0"},
		{"reversi_storage_written_bytes_total", nil, func(v float64) bool { return v > 0 }, "> 0"},
		{"reversi_storage_read_bytes_total", nil, func(v float64) bool { return v > 0 }, "> 0"},
	} {
		if v := last.sum(tc.name, tc.match); !tc.check(v) {
			t.Errorf("%s%v = %v, want %s", tc.name, tc.match, v, tc.want)
		}
	}
	for _, kind := range []string{"inline", "chunk", "scan", "merge", "resolve"} {
		if last.sum(handled, map[string]string{"kind": kind, "outcome": "ok"}) == 0 {
			t.Errorf("no ok %s messages counted", kind)
		}
	}
	problems, err := promlint.New(bytes.NewReader(last.raw)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	// Stopping the worker stops the server.
	if err := w.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("worker exit after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("worker did not stop within a minute of SIGTERM")
	}
	if _, err := getMetrics(url); err == nil {
		t.Error("/metrics still answers after the worker exited")
	}

	// inspect reports the transactions the worker recorded as it stopped,
	// which include every one the last scrape showed, and prices them.
	rep, out := inspectReport(t, bin, run)
	for _, want := range []string{"storage transactions by category and service:", "estimated cost (Azure list prices", "blob data stored: "} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	checkClean(t, bin, run)
	if rep.Cost == nil || rep.Cost.StoredBytes <= 0 || rep.Cost.TransactionsUSD <= 0 {
		t.Fatalf("inspect cost %+v", rep.Cost)
	}
	var bySvc, priced int64
	for svc, n := range rep.TransactionsByService {
		bySvc += n
		if float64(n) < last.sum(txs, map[string]string{"service": svc}) {
			t.Errorf("inspect: %d %s transactions, fewer than the last scrape's %v", n, svc, last.sum(txs, map[string]string{"service": svc}))
		}
	}
	for _, l := range rep.Cost.Lines {
		priced += l.Transactions
	}
	if bySvc != rep.StorageTransactions || priced != rep.StorageTransactions {
		t.Errorf("inspect: %d transactions, %d by service, %d priced", rep.StorageTransactions, bySvc, priced)
	}

	// Every line is JSON; every line about a message names the run, the
	// ply, the kind, the message id and the worker.
	if len(wlog.bad) > 0 {
		t.Errorf("%d log lines are not JSON, first %q", len(wlog.bad), wlog.bad[0])
	}
	stopped := false
	for _, line := range wlog.lines {
		stopped = stopped || line["msg"] == "worker stopped"
		if line["run"] != run || line["worker"] != "m0" {
			b, _ := json.Marshal(line)
			t.Errorf("log line without the run and worker: %s", b)
		}
	}
	if !stopped {
		t.Error("no \"worker stopped\" line")
	}
	msgLines := 0
	for _, line := range wlog.lines {
		if _, ok := line["msg_id"]; !ok {
			continue
		}
		msgLines++
		ply, isNum := line["ply"].(float64)
		id, _ := line["msg_id"].(string)
		if line["run"] != run || !isNum || ply < 0 || ply > target || line["kind"] == nil || id == "" || line["worker"] != "m0" {
			b, _ := json.Marshal(line)
			t.Errorf("message log line lacks run, ply, kind, msg_id or worker: %s", b)
		}
	}
	if float64(msgLines) < last.sum(handled, nil) {
		t.Errorf("%d message log lines for %v messages handled", msgLines, last.sum(handled, nil))
	}
	if !strings.Contains(string(last.raw), "go_goroutines") {
		t.Error("no Go runtime metrics")
	}
}

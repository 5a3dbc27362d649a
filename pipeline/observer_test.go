package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// recorder is an Observer that keeps every call.
type recorder struct {
	mu    sync.Mutex
	calls map[[2]string]int // (kind, outcome) -> count
	zero  int               // calls with a non-positive duration
}

func (r *recorder) TaskDone(kind, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[[2]string{kind, outcome}]++
	if d <= 0 {
		r.zero++
	}
}

// TestObserverAndTaskLogFields runs a 4x4 run with two unhandleable
// messages added to its queue, and checks that the Observer hears of every
// message with the right outcome, that its counts agree with Progress,
// and that every log line about a message carries the run, the ply, the
// kind and the message id.
func TestObserverAndTaskLogFields(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "obs", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 200, BucketBlobs: 4}}}
	if _, err := Seed(ctx, be, cfg); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Zgarbage", "M05-q-nothing"} {
		if _, err := be.Queue(WorkQueue(cfg.Name)).Enqueue(ctx, text, storage.EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{calls: map[[2]string]int{}}
	var logs testkit.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	progress := &Progress{}
	wcfg := WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond, Observer: rec}
	rep, err := RunLocal(ctx, be, cfg, 2, wcfg, log, progress)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Root != "white" {
		t.Fatalf("complete=%v root=%q, want complete white", rep.Complete, rep.Root)
	}

	byOutcome := map[string]int{}
	for k, n := range rec.calls {
		byOutcome[k[1]] += n
	}
	if got, want := int64(byOutcome[OutcomeOK]), progress.Tasks.Load(); got != want || got == 0 {
		t.Errorf("observer saw %d ok tasks, progress counted %d", got, want)
	}
	if byOutcome[OutcomePoison] != 2 || progress.Poisoned.Load() != 2 {
		t.Errorf("poison: observer %d, progress %d; want 2 and 2", byOutcome[OutcomePoison], progress.Poisoned.Load())
	}
	if rec.calls[[2]string{"unknown", OutcomePoison}] != 1 || rec.calls[[2]string{"merge", OutcomePoison}] != 1 {
		t.Errorf("poison by kind: %v; want one unknown and one merge", rec.calls)
	}
	if len(byOutcome) != 2 {
		t.Errorf("outcomes %v: want only ok and poison in an undisturbed run", byOutcome)
	}
	for _, kind := range []string{"inline", "chunk", "scan", "merge", "resolve"} {
		if rec.calls[[2]string{kind, OutcomeOK}] == 0 {
			t.Errorf("no ok %s task observed: %v", kind, rec.calls)
		}
	}
	if rec.zero != 0 {
		t.Errorf("%d tasks observed with no duration", rec.zero)
	}

	taskLines := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if _, ok := line["msg_id"]; !ok {
			continue
		}
		taskLines[line["msg"].(string)]++
		ply, _ := line["ply"].(float64)
		if line["run"] != cfg.Name || line["kind"] == "" || line["kind"] == nil || ply < 0 && line["kind"] != "unknown" {
			t.Errorf("task log line lacks run, ply or kind: %s", sc.Text())
		}
	}
	if taskLines["task done"] != byOutcome[OutcomeOK] || taskLines["message moved to the poison queue"] != 2 {
		t.Errorf("task log lines %v: want one \"task done\" per ok task (%d) and 2 poison lines", taskLines, byOutcome[OutcomeOK])
	}
}

func TestPlyOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{{"A00-x", 0}, {"C12-3-b", 12}, {"S07", 7}, {"Zgarbage", -1}, {"M5", -1}, {"", -1}, {"X9a", -1}} {
		if got := plyOf(tc.text); got != tc.want {
			t.Errorf("plyOf(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

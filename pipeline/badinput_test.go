package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestBadInputCorpus enqueues malformed messages into a running 4x4 run:
// each must land in the poison queue with its reason and one log line,
// messages that only look like stale redeliveries must be dropped quietly,
// and the run's counts and results must still equal the reference engine.
func TestBadInputCorpus(t *testing.T) {
	b4 := board.MustNew(4)
	start := b4.Canonical(b4.Start())
	key := start.Text()
	offBoard := board.Position{Side: board.Black, Occ: start.Occ | 1<<63, White: start.White}.Text()
	var many strings.Builder
	many.WriteString("A00-")
	for i := 0; i <= message.InlineLimit; i++ {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(key)
	}
	long := "S00" + strings.Repeat("x", 60000)

	corpus := []struct{ text, reason string }{
		{"garbage", `bad message: message "garbage": the ply must be two digits`},
		{"", `bad message: message "" is too short`},
		{"S0", `bad message: message "S0" is too short`},
		{"Z05-abc", `bad message: message "Z05-abc": unknown kind 'Z'`},
		{"A5-" + key, `bad message: message "A5-` + key + `": the ply must be two digits`},
		{"S-1", `bad message: message "S-1": the ply must be two digits`},
		{"S61", `bad message: message "S61": ply 61 is past the end of a 4x4 game`},
		{"S10", `bad message: ply 10 is past the run's target ply 8`},
		{"S05-", `bad message: scan message "S05-": expected S<ply> or S<ply>-<node> with a node from 1`},
		{long, `bad message: scan message "` + long[:77] + `...": expected S<ply> or S<ply>-<node> with a node from 1`},
		{"A00", `bad message: message "A00": expected '-' after the ply`},
		{"A00-", `bad message: inline message "A00-" holds no positions`},
		{"A00-" + offBoard, `bad message: inline message position 0: text key "` + offBoard + `": board: invalid position: discs off the 4x4 board at 0x8000000000000000`},
		{"A00-b00000000000000zz0000000000000000", `bad message: inline message position 0: board: malformed position: text key "b00000000000000zz0000000000000000": occupancy: character 14 is 'z', want a lowercase hex digit`},
		{"A00-" + key[:20], `bad message: inline message position 0: board: malformed position: text key "` + key[:20] + `" has length 20, want 33`},
		{"A01-" + key, `bad message: inline message position 0 has 4 discs, not ply 1`},
		{many.String(), `bad message: inline message holds 1001 positions, over the limit of 1000`},
		{"C00-0-p00/nope", `bad message: ply 0 has no final blob 0 named p00/nope`},
		{"C00-3-p00/start", `bad message: ply 0 has no final blob 3 named p00/start`},
		{"C00-0-p05/a-0", `bad message: chunk message "C00-0-p05/a-0": blob "p05/a-0" is not in ply 0's folder p00/`},
		{"C00-x-p00/a-0", `bad message: chunk message "C00-x-p00/a-0": expected C<ply>-<index>-<blob>`},
		{"M03-nosuch", `bad message: merge message "M03-nosuch": expected M<ply>-<index>`},
		{"M03--1", `bad message: merge message "M03--1": expected M<ply>-<index>`},
		{"R00-5", `bad message: ply 0 has no final blob 5 to resolve`},
		{"R00-0", `bad message: ply 1 is not resolved yet, so ply 0 cannot be resolved`},
		{"R00-x", `bad message: resolve message "R00-x": expected R<ply>-<index>[-<blob>]`},
		{"R01-0-p00/start", `bad message: resolve message "R01-0-p00/start": blob "p00/start" is not in ply 1's folder p01/`},
		{"X05-p07/f-abc", `bad message: compensation message "X05-p07/f-abc": blob "p07/f-abc" is not in ply 5's folder p05/`},
		{"X05-", `bad message: compensation message "X05-": storage: invalid request: blob name "" must be 1 to 1024 bytes of UTF-8`},
	}
	// Well-formed messages naming what no longer exists, as a redelivery
	// after the work was done does: they finish quietly.
	quiet := []string{"M00-0", "X01-p01/e-0000999-gone"}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "badinput", Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 4}}}
	r, err := Seed(ctx, be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Text that is not UTF-8 never reaches a worker: the queue refuses
	// it, on Azure and embedded alike (ParseMessage rejects it as well, for
	// the fuzzer's sake).
	if _, err := r.work.Enqueue(ctx, "S0\xff", storage.EnqueueOptions{TTL: -1}); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("enqueue of text that is not UTF-8: %v, want ErrInvalid", err)
	}
	for _, c := range corpus {
		if _, err := r.work.Enqueue(ctx, c.text, storage.EnqueueOptions{TTL: -1}); err != nil {
			t.Fatalf("enqueue %q: %v", message.Clip(c.text), err)
		}
	}
	for _, text := range quiet {
		if _, err := r.work.Enqueue(ctx, text, storage.EnqueueOptions{TTL: -1}); err != nil {
			t.Fatal(err)
		}
	}
	var logs testkit.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rep, err := RunLocal(ctx, be, cfg, 3, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, cfg.Target)
	settle(t, ctx, r, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond})

	// The poison queue holds exactly the corpus, each with its reason.
	want := map[string]string{}
	for _, c := range corpus {
		text := strings.ToValidUTF8(c.text, "\uFFFD")
		if len(text) > 40000 {
			text = text[:40000] + "...(truncated)" // as toPoison keeps it
		}
		want[text] = c.reason
	}
	got := map[string]string{}
	for {
		msgs, err := r.poison.Dequeue(ctx, storage.MaxDequeue, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			var pr poisonRecord
			if err := json.Unmarshal([]byte(m.Text), &pr); err != nil {
				t.Fatalf("poison record %q: %v", message.Clip(m.Text), err)
			}
			if _, dup := got[pr.Text]; dup {
				t.Errorf("poisoned twice: %q", message.Clip(pr.Text))
			}
			got[pr.Text] = strings.ToValidUTF8(pr.Reason, "\uFFFD")
		}
	}
	for text, reason := range want {
		if g, ok := got[text]; !ok {
			t.Errorf("%q: not in the poison queue", message.Clip(text))
		} else if g != strings.ToValidUTF8(reason, "\uFFFD") {
			t.Errorf("%q: reason\n  %s\nwant\n  %s", message.Clip(text), g, reason)
		}
	}
	for text, reason := range got {
		if _, ok := want[text]; !ok {
			t.Errorf("poisoned unexpectedly: %q: %s", message.Clip(text), reason)
		}
	}

	// One error line per poisoned message, no other errors, no panics.
	var poisonLines int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", message.Clip(line), err)
		}
		if rec["level"] == "ERROR" {
			if rec["msg"] != "message moved to the poison queue" {
				t.Errorf("unexpected error log: %s", message.Clip(line))
			}
			poisonLines++
		}
	}
	if poisonLines != len(corpus) || strings.Contains(logs.String(), "panic") {
		t.Errorf("%d poison log lines for %d bad messages (panic logged: %v)", poisonLines, len(corpus), strings.Contains(logs.String(), "panic"))
	}
}

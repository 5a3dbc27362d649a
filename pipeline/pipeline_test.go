package pipeline

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("PIPELINE_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

func TestPipeline4x4ToTheEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "four", Config: runstore.Config{Board: 4, Target: 12, Sizes: runstore.Sizes{BlobPositions: 100, BucketBlobs: 4}}}
	rep, err := RunLocal(ctx, be, cfg, 4, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Root != "white" {
		t.Errorf("complete=%v root=%q, want complete white", rep.Complete, rep.Root)
	}
	// docs/reference.md: perfect play ends 3-11 (black-white), a score
	// of -10 with the two empty squares going to white.
	if rep.Score == nil || *rep.Score != (report.Score{Black: 3, White: 11}) {
		t.Errorf("perfect-play score %+v, want 3-11", rep.Score)
	}
	if rep.RootScore == nil || *rep.RootScore != -10 {
		t.Errorf("root score %v, want -10", rep.RootScore)
	}
	// Every storage call is labelled, and each stage paid for its own.
	byCat := be.Stats().ByCategory()
	if n := byCat[""]; n != 0 {
		t.Errorf("%d storage transactions without a category: %+v", n, be.Stats().Ops)
	}
	for _, c := range []string{task.CategoryEnumeration, task.CategoryDedup, task.CategoryBacktrack, task.CategoryControl} {
		if byCat[c] == 0 {
			t.Errorf("no transactions in category %q: %v", c, byCat)
		}
	}
	if len(rep.Plies) != len(testkit.Ref4x4) {
		t.Fatalf("%d plies, want %d", len(rep.Plies), len(testkit.Ref4x4))
	}
	for i, p := range rep.Plies {
		got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}
		if got != testkit.Ref4x4[i] {
			t.Errorf("ply %d: got %v, want %v", i, got, testkit.Ref4x4[i])
		}
	}
}

func TestPipeline8x8Ply8(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := teststore.Embedded(t)
	cfg := RunConfig{Name: "eight", Config: runstore.Config{Board: 8, Target: 8, Sizes: runstore.Sizes{BlobPositions: 5000, BucketBlobs: 8}}}
	rep, err := RunLocal(ctx, be, cfg, 4, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || rep.Root != "unknown" {
		t.Errorf("complete=%v root=%q, want complete unknown", rep.Complete, rep.Root)
	}
	if rep.Score != nil {
		t.Errorf("score %+v for a run that stops before the end of the game", rep.Score)
	}
	for i, p := range rep.Plies {
		if p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i] || p.Terminal != 0 || p.Unknown != p.Positions {
			t.Errorf("ply %d: %+v, want positions %d edges %d", i, p, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
		}
	}
	t.Logf("storage transactions: %d", be.Stats().Total())
	for _, p := range rep.Plies {
		t.Logf("%+v", p)
	}
}

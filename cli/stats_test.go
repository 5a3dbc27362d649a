package cli

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestRecordStatsEvery: a recorder started before its run is seeded finds
// the run once it is, and keeps the process's transactions stored under
// its id, rewritten rather than added to, so two recorders of one id
// count once.
func TestRecordStatsEvery(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	stop := recordStatsEvery(be, "statsrun", "p1", 5*time.Millisecond, slog.Default())
	r, err := pipeline.Seed(ctx, be, pipeline.RunConfig{Name: "statsrun", Config: runstore.Config{Board: 4, Target: 2}})
	if err != nil {
		t.Fatal(err)
	}
	// A guard against a recorder that never writes; nothing is timed.
	for guard := time.Now().Add(time.Minute); ; {
		s, err := r.RecordedStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Storage.Total() > 0 {
			break
		}
		if time.Now().After(guard) {
			t.Fatal("the recorder stored nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	again := recordStatsEvery(be, "statsrun", "p1", 5*time.Millisecond, slog.Default())
	time.Sleep(50 * time.Millisecond)
	again()
	// Once more by hand, so the row holds the count as of now.
	if err := r.RecordStats(ctx, "p1", processStats(be)); err != nil {
		t.Fatal(err)
	}
	recorded, err := r.RecordedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, have := recorded.Storage.Total(), be.Stats().Total(); got == 0 || got > have {
		t.Errorf("recorded %d transactions; the process has made %d", got, have)
	}
	if have := cputime.Process(); recorded.CPU <= 0 || recorded.CPU > have {
		t.Errorf("recorded %s of CPU; the process has used %s", recorded.CPU, have)
	}
	if have := cputime.Held(); recorded.Held <= 0 || recorded.Held > have {
		t.Errorf("recorded %s held; the process has held %s", recorded.Held, have)
	}
}

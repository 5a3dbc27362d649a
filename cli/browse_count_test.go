package cli

import (
	"context"
	"testing"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestBrowserCountsWhileRunning: while enumerate runs, its browser's
// report counts each of the process's transactions once: the process's
// recorder stores them in the run every few seconds (recordStatsEvery),
// and the report reads them there.
func TestBrowserCountsWhileRunning(t *testing.T) {
	ctx := context.Background()
	be := teststore.Embedded(t)
	r, err := pipeline.Seed(ctx, be, pipeline.RunConfig{Name: "counted", Config: runstore.Config{Board: 4, Target: 2}})
	if err != nil {
		t.Fatal(err)
	}
	// What the recorder does every few seconds.
	storeStats(r, be, "enumerate-1", nil)
	all, err := r.RecordedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recorded := all.Storage
	cf := costFlags{}
	src := &runSource{be: be, name: "counted", cf: &cf}
	rep, err := src.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.StorageTransactions != recorded.Total() {
		t.Errorf("the browser's report has %d transactions; the process recorded %d", rep.StorageTransactions, recorded.Total())
	}
}

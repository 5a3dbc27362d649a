package pipeline

import (
	"reflect"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/runstore"
)

// TestRunConfigRecord: a run's settings row reads back as the
// configuration that wrote it, for the usual start and another, and the
// test's configurations set every recorded field, so a field added to
// the row but not to record and fromRecord fails here.
func TestRunConfigRecord(t *testing.T) {
	b := board.MustNew(6)
	start, err := b.ParseMoves(sixStart)
	if err != nil {
		t.Fatal(err)
	}
	usual := RunConfig{Name: "usual", Board: 6, Target: 5}.WithDefaults()
	custom := RunConfig{Name: "custom", Board: 6, Target: 4, BlobPositions: 500, BucketBlobs: 3, Start: start,
		Solve: true, SolvePositions: 16, QueueShards: 2, PartitionShards: 3, Accounts: 2, GrowFrom: 3, MergeFanIn: 8}.WithDefaults()
	set := map[string]bool{}
	for _, cfg := range []RunConfig{usual, custom} {
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", cfg.Name, err)
		}
		rec := cfg.record(b)
		v := reflect.ValueOf(rec)
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Field(i).Name] = true
			}
		}
		got, err := fromRecord(cfg.Name, rec)
		if err != nil {
			t.Fatalf("%s: reading back: %v", cfg.Name, err)
		}
		if got != cfg {
			t.Errorf("%s: read back as %+v, want %+v", cfg.Name, got, cfg)
		}
	}
	if usual.record(b).Start != "" {
		t.Errorf("the usual start is recorded as %q, want \"\"", usual.record(b).Start)
	}
	typ := reflect.TypeOf(usual.record(b))
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; name != "Created" && !set[name] {
			t.Errorf("field %s of the settings row is never set by record", name)
		}
	}
}

// TestRunConfigRecordBad: a settings row that no configuration could have
// written is an error, not a run.
func TestRunConfigRecordBad(t *testing.T) {
	good := RunConfig{Name: "bad", Board: 6, Target: 4}.WithDefaults().record(board.MustNew(6))
	badBoard, badStart, badTarget := good, good, good
	badBoard.Board = 5
	badStart.Start = "not a position"
	badTarget.Target = -3
	for name, rec := range map[string]runstore.Config{"board": badBoard, "start": badStart, "target": badTarget} {
		if _, err := fromRecord("bad", rec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

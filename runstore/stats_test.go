package runstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestWorkerStatsRows: a process's statistics, CPU time and time held
// read back as written, a row rewritten replaces the one before, a row
// of a release before the CPU time (or the time held) reads as none of
// it, and a row whose CPU time or time held is negative is refused as
// malformed.
func TestWorkerStatsRows(t *testing.T) {
	ctx := context.Background()
	state := teststore.Embedded(t).Table("runstate")
	if err := state.Create(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(board.MustNew(4), []storage.Table{state}, []storage.Table{state}, 1, TreeCompletion)
	one := WorkerStats{Storage: storage.Stats{Ops: []storage.OpStat{{Service: "table", Operation: "get", Category: "control", Count: 3}}, BytesRead: 10}, CPU: 1500 * time.Millisecond, Held: 4 * time.Second}
	for _, w := range []WorkerStats{{CPU: time.Second}, one} {
		if err := s.PutWorkerStats(ctx, "w1", w); err != nil {
			t.Fatal(err)
		}
	}
	// Rows as releases before the CPU time, and before the time held,
	// wrote them.
	if _, err := state.Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: "w0", Props: map[string]any{"Stats": []byte(`{"ops":[],"bytes_written":7,"bytes_read":0}`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := state.Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: "w00", Props: map[string]any{"Stats": []byte(`{"ops":[],"bytes_written":0,"bytes_read":0,"cpu_seconds":2.5}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.WorkerStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []WorkerStats{{Storage: storage.Stats{Ops: []storage.OpStat{}, BytesWritten: 7}}, {Storage: storage.Stats{Ops: []storage.OpStat{}}, CPU: 2500 * time.Millisecond}, one}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	for _, bad := range []string{`{"ops":[],"cpu_seconds":-1}`, `{"ops":[],"held_seconds":-1}`} {
		if _, err := state.Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: "w2", Props: map[string]any{"Stats": []byte(bad)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WorkerStats(ctx); !errors.Is(err, ErrMalformed) {
			t.Errorf("a row %s: %v, want ErrMalformed", bad, err)
		}
	}
}

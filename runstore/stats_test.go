package runstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/storage"
)

// TestWorkerStatsRows: a process's statistics and CPU time read back as
// written, a row rewritten replaces the one before, a row of a release
// before the CPU time reads as none, and a row whose CPU time is
// negative is refused as malformed.
func TestWorkerStatsRows(t *testing.T) {
	ctx := context.Background()
	state := testkit.Embedded(t).Table("runstate")
	if err := state.Create(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(board.MustNew(4), []storage.Table{state}, []storage.Table{state}, 1, TreeCompletion)
	one := WorkerStats{Storage: storage.Stats{Ops: []storage.OpStat{{Service: "table", Operation: "get", Category: "control", Count: 3}}, BytesRead: 10}, CPU: 1500 * time.Millisecond}
	for _, w := range []WorkerStats{{CPU: time.Second}, one} {
		if err := s.PutWorkerStats(ctx, "w1", w); err != nil {
			t.Fatal(err)
		}
	}
	// A row as releases before the CPU time wrote it.
	if _, err := state.Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: "w0", Props: map[string]any{"Stats": []byte(`{"ops":[],"bytes_written":7,"bytes_read":0}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.WorkerStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []WorkerStats{{Storage: storage.Stats{Ops: []storage.OpStat{}, BytesWritten: 7}}, one}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if _, err := state.Upsert(ctx, storage.Entity{PartitionKey: pkWorkers, RowKey: "w2", Props: map[string]any{"Stats": []byte(`{"ops":[],"cpu_seconds":-1}`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkerStats(ctx); !errors.Is(err, ErrMalformed) {
		t.Errorf("a row of -1 CPU seconds: %v, want ErrMalformed", err)
	}
}

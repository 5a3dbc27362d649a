package runstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// TestCompletionConcurrent finishes n items from many goroutines at once:
// at least one must see the stage complete, none before every item is.
func TestCompletionConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, 63, 64, 65, 200} {
		s, state := openStore(t)
		m := stageMarkers{pk: "v01", item: 'd', group: 'e'}
		var finished atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := state.Add(ctx, storage.Entity{PartitionKey: m.pk, RowKey: markerKey(m.item, i), Props: map[string]any{}}); err != nil {
					t.Error(err)
					return
				}
				all, err := s.itemDone(ctx, m, i, n)
				if err != nil {
					t.Error(err)
				}
				if all {
					// Markers are only added: every one must be there now.
					es, err := queryAll(ctx, state, m.pk, markerKey(m.item, 0), markerKey(m.item, n))
					if err != nil || len(es) != n {
						t.Errorf("n=%d: complete with %d of the markers (%v)", n, len(es), err)
					}
					finished.Add(1)
				}
			}()
		}
		wg.Wait()
		if finished.Load() == 0 {
			t.Errorf("n=%d: no item saw the stage complete", n)
		}
		if all, err := s.allDone(ctx, m, n); err != nil || !all {
			t.Errorf("n=%d: allDone = %v, %v", n, all, err)
		}
	}
}

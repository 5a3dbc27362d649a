package runstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// TestCompletionConcurrent finishes n items from many goroutines at once:
// at least one must see the stage complete, none before every item is;
// with the markers in one partition and spread over three.
func TestCompletionConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ n, shards int }{{1, 1}, {63, 1}, {64, 1}, {65, 1}, {200, 1}, {1, 3}, {65, 3}, {200, 3}, {300, 3}} {
		n := c.n
		s, state := openStore(t)
		m := stageMarkers{spread: spread{"v01", c.shards}, item: 'd', group: 'e'}
		var finished atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := state.Add(ctx, storage.Entity{PartitionKey: m.pk(i), RowKey: markerKey(m.item, i), Props: map[string]any{}}); err != nil {
					t.Error(err)
					return
				}
				all, err := s.itemDone(ctx, m, i, n)
				if err != nil {
					t.Error(err)
				}
				if all {
					// Markers are only added: every one must be there now.
					es, err := queryPartitions(ctx, s.state, m.pks(), markerKey(m.item, 0), markerKey(m.item, n))
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

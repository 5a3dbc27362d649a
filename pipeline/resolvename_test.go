package pipeline

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/task"
)

// finalRows matches the partitions of final blob rows: "f<ply>", or with
// partition shards "f<ply>-<shard>" (runstore's keys.go).
var finalRows = regexp.MustCompile(`^f[0-9]{2}(-[0-9]{2})?$`)

// TestResolveMessagesNameTheirBlob: an R message names the final blob it
// resolves, so the resolution reads no final blob row; an R message of
// an earlier release, without the name, is resolved from the row. A run
// that gets both kinds, every other R message stripped of its name as
// it is dequeued, resolves every ply exactly, and the stripped ones are
// the resolutions that read a final blob row.
func TestResolveMessagesNameTheirBlob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	const name = "resolvenames"
	origin := message.StandardOrigin(board.MustNew(4))
	var mu sync.Mutex
	var named, stripped, rowReads int
	be := storage.Wrap(inner, func(c *storage.Call, next func() error) error {
		err := next()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case c.Op == storage.QueueDequeue && c.Resource == WorkQueue(name):
			for i := range c.Messages {
				m, err := message.ParseMessage(origin, c.Messages[i].Text)
				if err != nil || m.Kind != message.KindResolve {
					continue
				}
				if m.Blob == "" {
					t.Errorf("R message %q names no blob", c.Messages[i].Text)
				}
				if (named+stripped)%2 == 1 {
					m.Blob = ""
					c.Messages[i].Text = m.Format()
					stripped++
				} else {
					named++
				}
			}
		case c.Op == storage.TableGet && finalRows.MatchString(c.Partition) && storage.CategoryFrom(c.Ctx) == task.CategoryBacktrack:
			rowReads++ // by a resolution: an expansion reads its row to check its C message
		}
		return err
	})
	cfg := RunConfig{Name: name, Config: runstore.Config{Board: 4, Target: 9, Sizes: runstore.Sizes{BlobPositions: 8, BucketBlobs: 2}}}
	rep, err := RunLocal(ctx, be, cfg, 3, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport4x4(t, rep, 9)
	if named == 0 || stripped == 0 {
		t.Errorf("%d R messages named their blob and %d were stripped; want some of each", named, stripped)
	}
	t.Logf("%d R messages named their blob, %d were stripped; %d final blob rows read", named, stripped, rowReads)
	// A redelivery of a done R message reads no row: at most one a
	// stripped delivery, none a named one (which would make about
	// twice as many).
	if rowReads == 0 || rowReads > stripped {
		t.Errorf("%d final blob rows read for %d R messages without a name and %d with", rowReads, stripped, named)
	}
}

package pipeline

import (
	"context"
	"regexp"
	"strings"
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
	const name = "resolvenames"
	origin := message.StandardOrigin(board.MustNew(4))
	var mu sync.Mutex
	var named, stripped, rowReads int
	be := embeddedWith(t, func(c *storage.Call, next func() error) error {
		err := next()
		mu.Lock()
		defer mu.Unlock()
		forDequeuedResolves(c, name, origin, func(msg *storage.Message, m message.Message) {
			if m.Blob == "" {
				t.Errorf("R message %q names no blob", msg.Text)
			}
			if (named+stripped)%2 == 1 {
				m.Blob = ""
				msg.Text = m.Format()
				stripped++
			} else {
				named++
			}
		})
		if c.Op == storage.TableGet && finalRows.MatchString(c.Partition) && storage.CategoryFrom(c.Ctx) == task.CategoryBacktrack {
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

// TestMessagesOfOlderRuns: a run seeded before its settings recorded
// the forms of message (runstore.MessagesUnnamed) may have workers of
// releases that refuse an R message naming its blob and mishandle a
// compensation message covering all of a merge's outputs, so its
// workers send neither: every R message names an index alone, and
// every merge output has a compensation message of its own. A run
// seeded now sends the named forms: every R names its blob, and its
// merges enqueue fewer compensation messages. Both resolve exactly.
func TestMessagesOfOlderRuns(t *testing.T) {
	origin := message.StandardOrigin(board.MustNew(4))
	run := func(name string, forms runstore.Messages) (named, unnamed, covers int, finals int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var mu sync.Mutex
		be := embeddedWith(t, func(c *storage.Call, next func() error) error {
			err := next()
			mu.Lock()
			defer mu.Unlock()
			forDequeuedResolves(c, name, origin, func(_ *storage.Message, m message.Message) {
				if m.Blob != "" {
					named++
				} else {
					unnamed++
				}
			})
			if c.Op == storage.QueueEnqueue && strings.HasPrefix(c.Resource, CompensationQueue(name)) && err == nil {
				covers++
			}
			return err
		})
		cfg := RunConfig{Name: name, Config: runstore.Config{Board: 4, Target: 9, Sizes: runstore.Sizes{BlobPositions: 8, BucketBlobs: 4}, Messages: forms}}
		rep, err := RunLocal(ctx, be, cfg, 3, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkReport4x4(t, rep, 9)
		for _, p := range rep.Plies[1:] {
			finals += p.Blobs
		}
		return named, unnamed, covers, finals
	}
	named, unnamed, oldCovers, finals := run("unnamed", runstore.MessagesUnnamed)
	t.Logf("unnamed: %d R named, %d not; %d compensation messages, %d final blobs", named, unnamed, oldCovers, finals)
	if named != 0 || unnamed == 0 || int64(oldCovers) < finals {
		t.Errorf("a run of unnamed messages: %d R messages named their blob, %d did not; %d compensation messages for %d final blobs past ply 0", named, unnamed, oldCovers, finals)
	}
	named, unnamed, covers, _ := run("named", 0)
	t.Logf("named: %d R named, %d not; %d compensation messages", named, unnamed, covers)
	if named == 0 || unnamed != 0 || covers >= oldCovers {
		t.Errorf("a run seeded now: %d R messages named their blob, %d did not; %d compensation messages, %d with unnamed messages", named, unnamed, covers, oldCovers)
	}
}

// forDequeuedResolves calls f with each R message that call c, if a
// dequeue from run name's work queue, returned: the message as the
// caller will get it, which f may rewrite, and as parsed.
func forDequeuedResolves(c *storage.Call, name string, origin message.Origin, f func(msg *storage.Message, m message.Message)) {
	if c.Op != storage.QueueDequeue || c.Resource != WorkQueue(name) {
		return
	}
	for i := range c.Messages {
		if m, err := message.ParseMessage(origin, c.Messages[i].Text); err == nil && m.Kind == message.KindResolve {
			f(&c.Messages[i], m)
		}
	}
}

// embeddedWith is a fresh embedded backend, closed when the test ends,
// with every call passed through mw.
func embeddedWith(t *testing.T, mw storage.Middleware) storage.Backend {
	t.Helper()
	inner, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	return storage.Wrap(inner, mw)
}

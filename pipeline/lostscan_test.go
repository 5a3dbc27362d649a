package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// losingBackend loses the first enqueue of every work message of one
// kind and ply but the first task's, as if each had been deleted or
// poisoned, and counts the scan nodes past the first enqueued for that
// ply.
type losingBackend struct {
	storage.Backend
	prefix string // the lost messages' kind and ply: "M06-"
	keep   string // the one of them not lost: the step's first task

	mu    sync.Mutex
	sent  map[string]bool
	lost  int
	nodes int
	ply   int
}

func (b *losingBackend) Queue(name string) storage.Queue {
	return onWork(name, b.Backend.Queue(name), func(q storage.Queue) storage.Queue { return losingQueue{q, b} })
}

type losingQueue struct {
	storage.Queue
	b *losingBackend
}

func (q losingQueue) Enqueue(ctx context.Context, text string, opts storage.EnqueueOptions) (storage.Receipt, error) {
	b := q.b
	b.mu.Lock()
	if strings.HasPrefix(text, fmt.Sprintf("S%02d-", b.ply)) {
		b.nodes++
	}
	lose := strings.HasPrefix(text, b.prefix) && text != b.keep && !b.sent[text]
	if lose {
		b.sent[text] = true
		b.lost++
	}
	b.mu.Unlock()
	if lose {
		return storage.Receipt{ID: "lost"}, nil
	}
	return q.Queue.Enqueue(ctx, text, opts)
}

// TestLostStepIsRescanned loses the first message of every task of a
// step of ply 6 but its first (the bucket merges of a ply without
// combine levels, where the scan enqueues every merge; the first combine
// level of one, where the first task starts the others), so that the
// run stalls with well over a scan node's tasks undone. The idle
// workers' nudge scans the step through a tree of scan nodes, which
// enqueues every lost task again, and the run completes exactly.
func TestLostStepIsRescanned(t *testing.T) {
	wcfg := WorkerConfig{Visibility: 2 * time.Second, CompensationDelay: 4 * time.Second, PollMax: 50 * time.Millisecond}
	for _, tc := range []struct {
		name   string
		fanIn  int
		prefix string
		keep   string
	}{
		{"merges", 0, "M06-", ""},
		{"combines", 8, "G06-", "G06-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cfg := RunConfig{Name: "lostscan", Config: runstore.Config{Board: 4, Target: 8,
				Sizes: runstore.Sizes{BlobPositions: 2, BucketBlobs: 1, MergeFanIn: tc.fanIn}}}
			be := &losingBackend{Backend: teststore.Embedded(t), prefix: tc.prefix, keep: tc.keep, ply: 6, sent: map[string]bool{}}
			rep, err := RunLocal(ctx, be, cfg, 3, wcfg, testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkReport4x4(t, rep, cfg.Target)
			be.mu.Lock()
			defer be.mu.Unlock()
			t.Logf("%d messages lost, %d scan nodes past the first enqueued", be.lost, be.nodes)
			if be.lost <= 2*64 { // dedup's scanSpan
				t.Errorf("%d messages lost; the test wants more than two scan nodes' tasks", be.lost)
			}
			if be.nodes < 2 {
				t.Errorf("%d scan nodes past the first enqueued, want at least 2", be.nodes)
			}
		})
	}
}

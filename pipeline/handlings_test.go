package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// TestHandlingsReported: a run's report says, per ply, how many messages
// were handled (the messages of the ply its workers dequeued, counted
// beneath the meter, each dequeue billed to the ply), the table entities
// read, and the most one handling cost, within what the whole ply's
// handlings cost.
func TestHandlingsReported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const name = "handled"
	var mu sync.Mutex
	dequeued := map[int]int64{}
	m := storage.NewMetered(embeddedWith(t, func(c *storage.Call, next func() error) error {
		err := next()
		if c.Op == storage.QueueDequeue && c.Resource == WorkQueue(name) {
			mu.Lock()
			for _, msg := range c.Messages {
				dequeued[plyOf(msg.Text)]++
			}
			mu.Unlock()
		}
		return err
	}))
	start := time.Now()
	cfg := RunConfig{Name: name, Config: runstore.Config{Board: 4, Target: 8, Sizes: runstore.Sizes{BlobPositions: 8, BucketBlobs: 2}}}
	rep, err := RunLocal(ctx, m, cfg, 3, WorkerConfig{Visibility: 5 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start).Seconds()
	stats := m.Stats()
	rep.SetHandlings(stats.Plies)
	byPly := map[int]storage.PlyStat{}
	for _, p := range stats.Plies {
		byPly[p.Ply] = p
	}
	if len(rep.Plies) != 9 {
		t.Fatalf("%d plies reported, want 9", len(rep.Plies))
	}
	for _, p := range rep.Plies {
		ps := byPly[p.Ply]
		// Its bucket merges and its final blobs' resolutions at least.
		if p.Tasks != dequeued[p.Ply] || p.Tasks < p.Merges+p.Combines+p.Blobs {
			t.Errorf("ply %d: %d tasks; %d messages dequeued, %d merges, %d combines, %d final blobs", p.Ply, p.Tasks, dequeued[p.Ply], p.Merges, p.Combines, p.Blobs)
		}
		if p.FinalBlobs != p.Blobs || p.EntityReads != ps.EntityReads || p.EntityReads < p.Tasks {
			t.Errorf("ply %d: %d final blobs of %d, %d entities read of %d, %d tasks", p.Ply, p.FinalBlobs, p.Blobs, p.EntityReads, ps.EntityReads, p.Tasks)
		}
		// The dequeue that found a message is its ply's, not its
		// handling's.
		if ps.Ops["queue.dequeue"] != p.Tasks {
			t.Errorf("ply %d: %d dequeues, %d tasks", p.Ply, ps.Ops["queue.dequeue"], p.Tasks)
		}
		handled := ps.Total() - p.Tasks
		if p.MaxTaskTransactions < 1 || p.MaxTaskTransactions > handled || p.MaxTaskTransactions*p.Tasks < handled {
			t.Errorf("ply %d: the largest handling made %d transactions of the %d of %d handlings", p.Ply, p.MaxTaskTransactions, handled, p.Tasks)
		}
		if p.MaxTaskEntities < 1 || p.MaxTaskEntities > p.EntityReads || p.MaxTaskEntities*p.Tasks < p.EntityReads {
			t.Errorf("ply %d: the largest handling read %d entities of the %d of %d handlings", p.Ply, p.MaxTaskEntities, p.EntityReads, p.Tasks)
		}
		if p.MaxTaskSeconds <= 0 || p.MaxTaskSeconds > wall {
			t.Errorf("ply %d: the longest handling took %gs, in a run of %gs", p.Ply, p.MaxTaskSeconds, wall)
		}
	}

	// Two processes' records: counts add up, maxima are the larger.
	r, err := OpenRun(ctx, m, name)
	if err != nil {
		t.Fatal(err)
	}
	one := storage.Stats{Plies: []storage.PlyStat{{Ply: 3, Ops: map[string]int64{"table.get": 4}, EntityReads: 4, Tasks: 2, MaxTaskTransactions: 3, MaxTaskEntities: 3, MaxTaskSeconds: 0.5}}}
	two := storage.Stats{Plies: []storage.PlyStat{
		{Ply: 3, Ops: map[string]int64{"table.get": 5, "blob.get": 1}, EntityReads: 5, Tasks: 3, MaxTaskTransactions: 2, MaxTaskEntities: 4, MaxTaskSeconds: 0.25},
		{Ply: 4, Ops: map[string]int64{"queue.delete": 1}, Tasks: 1, MaxTaskTransactions: 1, MaxTaskSeconds: 0.125},
	}}
	for id, s := range map[string]runstore.WorkerStats{
		"one": {Storage: one, CPU: 1500 * time.Millisecond, Held: 4 * time.Second},
		"two": {Storage: two, CPU: 250 * time.Millisecond, Held: time.Second},
	} {
		if err := r.RecordStats(ctx, id, s); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := r.RecordedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.CPU != 1750*time.Millisecond || sum.Held != 5*time.Second {
		t.Errorf("the processes recorded %s of CPU time and %s held, want 1.75s and 5s", sum.CPU, sum.Held)
	}
	got := sum.Storage
	want := []storage.PlyStat{
		{Ply: 3, Ops: map[string]int64{"table.get": 9, "blob.get": 1}, EntityReads: 9, Tasks: 5, MaxTaskTransactions: 3, MaxTaskEntities: 4, MaxTaskSeconds: 0.5},
		{Ply: 4, Ops: map[string]int64{"queue.delete": 1}, Tasks: 1, MaxTaskTransactions: 1, MaxTaskSeconds: 0.125},
	}
	if len(got.Plies) != len(want) {
		t.Fatalf("recorded plies %+v, want %+v", got.Plies, want)
	}
	for i := range want {
		g, w := got.Plies[i], want[i]
		if g.Ply != w.Ply || g.EntityReads != w.EntityReads || g.Tasks != w.Tasks || g.MaxTaskTransactions != w.MaxTaskTransactions ||
			g.MaxTaskEntities != w.MaxTaskEntities || g.MaxTaskSeconds != w.MaxTaskSeconds || g.Total() != w.Total() {
			t.Errorf("recorded ply %+v, want %+v", g, w)
		}
	}
}

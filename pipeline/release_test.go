package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// liveBlobs tracks which expansion and combine blobs exist, and at each
// combine or merge output written, how many of its ply's expansion and
// combine blobs were still there.
type liveBlobs struct {
	storage.Backend
	mu   sync.Mutex
	live map[string]runstore.BlobName
	// least[ply] is the fewest expansion blobs live at a combine upload,
	// and the fewest combine blobs live at a merge output upload.
	leastExpansions, leastCombines map[int]int
	// events are the uploads and deletes of expansion, combine and
	// merge output blobs, in order.
	events []blobEvent
}

// blobEvent is a blob written or deleted.
type blobEvent struct {
	deleted bool
	name    runstore.BlobName
}

func (b *liveBlobs) Container(name string) storage.Container {
	return liveContainer{b.Backend.Container(name), b}
}

type liveContainer struct {
	storage.Container
	b *liveBlobs
}

func (c liveContainer) wrote(name string) {
	n, ok := runstore.ParseBlobName(name)
	if !ok {
		return
	}
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, blobEvent{name: n})
	count := func(kind runstore.BlobKind) int {
		k := 0
		for _, m := range b.live {
			if m.Ply == n.Ply && m.Kind == kind {
				k++
			}
		}
		return k
	}
	least := func(m map[int]int, v int) {
		if old, ok := m[n.Ply]; !ok || v < old {
			m[n.Ply] = v
		}
	}
	switch n.Kind {
	case runstore.ExpansionBlob:
		b.live[name] = n
	case runstore.CombineBlob:
		least(b.leastExpansions, count(runstore.ExpansionBlob))
		b.live[name] = n
	case runstore.FinalRunBlob:
		least(b.leastCombines, count(runstore.CombineBlob))
	}
}

func (c liveContainer) Put(ctx context.Context, name string, data []byte) error {
	err := c.Container.Put(ctx, name, data)
	if err == nil {
		c.wrote(name)
	}
	return err
}

func (c liveContainer) PutNew(ctx context.Context, name string, data []byte) error {
	err := c.Container.PutNew(ctx, name, data)
	if err == nil {
		c.wrote(name)
	}
	return err
}

func (c liveContainer) Upload(ctx context.Context, name string, r io.Reader) error {
	err := c.Container.Upload(ctx, name, r)
	if err == nil {
		c.wrote(name)
	}
	return err
}

func (c liveContainer) Delete(ctx context.Context, name string) error {
	err := c.Container.Delete(ctx, name)
	c.b.mu.Lock()
	delete(c.b.live, name)
	if n, ok := runstore.ParseBlobName(name); ok && err == nil {
		c.b.events = append(c.b.events, blobEvent{deleted: true, name: n})
	}
	c.b.mu.Unlock()
	return err
}

// mostOpen replays the blob events of ply p and returns the most parts
// (of parts) that were open at once: parts that had written an output
// while some of their inputs were still there, each holding its inputs
// beside its outputs. input names the part whose inputs a blob is,
// output the part whose outputs it is.
func mostOpen(events []blobEvent, p *runstore.Ply, parts int, input, output func(runstore.BlobName) (int, bool)) int {
	live := make([]int, parts)
	started := make([]bool, parts)
	most := 0
	for _, e := range events {
		n := e.name
		if n.Ply != p.Ply {
			continue
		}
		if k, ok := input(n); ok {
			if e.deleted {
				live[k]--
			} else {
				live[k]++
			}
		}
		if k, ok := output(n); ok && !e.deleted {
			started[k] = true
		}
		open := 0
		for k := range started {
			if started[k] && live[k] > 0 {
				open++
			}
		}
		most = max(most, open)
	}
	return most
}

// mostRangesOpen is mostOpen over the ranges of p's last combine level:
// their combined runs in, their final blobs out.
func mostRangesOpen(events []blobEvent, p *runstore.Ply) int {
	last, top := len(p.Levels)-1, p.Levels[len(p.Levels)-1]
	return mostOpen(events, p, top.Ranges, func(n runstore.BlobName) (int, bool) {
		if n.Kind != runstore.CombineBlob {
			return 0, false
		}
		level, j, _ := p.CombineAt(n.Index)
		return j % top.Ranges, level == last
	}, func(n runstore.BlobName) (int, bool) {
		return runstore.PartOf(n.Index, p.Buckets, top.Ranges), n.Kind == runstore.FinalRunBlob
	})
}

// mostGroupsOpen is mostOpen over the groups of p's first combine level:
// their expansion runs in, their combined runs out.
func mostGroupsOpen(events []blobEvent, p *runstore.Ply) int {
	first := p.Levels[0]
	return mostOpen(events, p, first.Groups, func(n runstore.BlobName) (int, bool) {
		return runstore.PartOf(n.Index, p.Tasks, first.Groups), n.Kind == runstore.ExpansionBlob
	}, func(n runstore.BlobName) (int, bool) {
		if n.Kind != runstore.CombineBlob {
			return 0, false
		}
		level, j, _ := p.CombineAt(n.Index)
		return j / first.Ranges, level == 0
	})
}

// TestDiskFollowsTheWork: on a ply with combine levels, a group's
// expansion runs are deleted once its combines are done, a level's runs
// once the tasks above that read them are, and a range's runs of the last
// level once its buckets are merged, not when the ply is Final. One
// worker loop takes the combines and merges in order, so the last
// combine of a ply must find at most the last group's expansion runs,
// and the last merges at most the last range's combined runs; and since
// a range's first bucket sends itself after the range's others
// (treeChildren), a range is merged before the next one starts, so no two
// hold their combined runs beside their final blobs at once; nor, since
// a group's first combine task does the same, do two groups hold their
// expansion runs beside their combined runs. The run must still count
// exactly.
func TestDiskFollowsTheWork(t *testing.T) {
	// The first sizes open every range of merges at its ply 8 without
	// the turn (41 did), the second two groups of combines (with 12
	// ranges or more, a later group's first range is mostly empty, so
	// the first sizes do not show it).
	for _, sizes := range []runstore.Sizes{{BlobPositions: 300, BucketBlobs: 2, MergeFanIn: 3}, {BlobPositions: 100, BucketBlobs: 8, MergeFanIn: 8}} {
		t.Run(fmt.Sprintf("%d positions, %d blobs, fan-in %d", sizes.BlobPositions, sizes.BucketBlobs, sizes.MergeFanIn), func(t *testing.T) {
			diskFollowsTheWork(t, sizes)
		})
	}
}

func diskFollowsTheWork(t *testing.T, sizes runstore.Sizes) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	be := &liveBlobs{Backend: teststore.Embedded(t), live: map[string]runstore.BlobName{}, leastExpansions: map[int]int{}, leastCombines: map[int]int{}}
	cfg := RunConfig{Name: "release", Config: runstore.Config{Board: 8, Target: 8, Sizes: sizes}}
	rep, err := RunLocal(ctx, be, cfg, 1, WorkerConfig{Visibility: 10 * time.Second, PollMax: 50 * time.Millisecond}, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checked, deep := 0, 0
	for i, p := range rep.Plies {
		if p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i] {
			t.Errorf("ply %d: %d positions and %d edges, want %d and %d", i, p.Positions, p.Edges, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
		}
		if i == 0 {
			continue
		}
		tasks, buckets := int(rep.Plies[i-1].Blobs), max(1, int(p.Merges))
		levels := sizes.Levels(tasks, buckets)
		if len(levels) == 0 || levels[len(levels)-1].Ranges < 2 {
			continue
		}
		checked++
		if len(levels) > 1 {
			deep++
		}
		groups, top := levels[0].Groups, levels[len(levels)-1]
		lastGroup := runstore.SpanOf(groups-1, tasks, groups)
		if got := be.leastExpansions[i]; got > lastGroup.Hi-lastGroup.Lo {
			t.Errorf("ply %d: %d expansion runs in %d groups; the last combine still found %d of them", i, tasks, groups, got)
		}
		if got := be.leastCombines[i]; got > top.Groups {
			t.Errorf("ply %d: combine levels %v; the last merge still found %d combined runs", i, levels, got)
		}
		p := &runstore.Ply{Ply: i, Tasks: tasks, Buckets: buckets, Levels: levels}
		if open := mostRangesOpen(be.events, p); open > 1 {
			t.Errorf("ply %d: combine levels %v; %d ranges of bucket merges were open at once, want 1", i, levels, open)
		}
		if open := mostGroupsOpen(be.events, p); open > 1 {
			t.Errorf("ply %d: combine levels %v; %d groups of combine tasks were open at once, want 1", i, levels, open)
		}
	}
	if checked < 2 || deep < 1 {
		t.Fatalf("only %d plies had combine levels of several ranges, %d of them more than one level: the test does not exercise the release", checked, deep)
	}
}

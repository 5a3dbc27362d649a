// Command measure runs the pipeline through a target ply on the embedded
// backend, as enumerate does, and writes what each ply's messages cost in
// storage, by category: transactions by operation, bytes moved, table
// entities and the blob data kept. Package plan fits its model to these
// files (plan/testdata/measured-*.json). It runs as enumerate does: built
// with enumerate's profile (-pgo) and its worker collector settings
// (pipeline.WorkerGC):
//
//	go run -pgo=cmd/enumerate/default.pgo ./plan/internal/measure -plies 11 -machine "2-core AMD EPYC VM" -o plan/testdata/measured-11.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/plan"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

func run() error {
	plies := flag.Int("plies", 11, "target ply (8x8)")
	workers := flag.Int("workers", runtime.NumCPU(), "worker loops")
	machine := flag.String("machine", "", "the machine, for the record (required)")
	out := flag.String("o", "", "write the measurement to this file (required)")
	defaults := pipeline.DefaultRunConfig()
	growFrom := flag.Int("grow-from", defaults.GrowFrom, "the run's -grow-from (0: fixed sizes)")
	fanIn := flag.Int("merge-fan-in", defaults.MergeFanIn, "the run's -merge-fan-in (0: no limit)")
	blobPositions := flag.Int("blob-positions", defaults.BlobPositions, "the run's -blob-positions")
	bucketBlobs := flag.Int("bucket-blobs", defaults.BucketBlobs, "the run's -bucket-blobs")
	yardstick := flag.Bool("yardstick", false, "only time the plan's yardstick run (plan.MeasureYardstick) and print its CPU ns an edge")
	flag.Parse()
	if *yardstick {
		y, err := plan.MeasureYardstick(context.Background(), plan.CalibrationTime)
		if err != nil {
			return err
		}
		_, err = fmt.Println(1e9 * y)
		return err
	}
	if *out == "" || *machine == "" || *plies < 1 || *workers < 1 || *blobPositions < 1 || *bucketBlobs < 1 {
		return fmt.Errorf("want -o FILE, -machine TEXT, -plies 1 or more, -workers, -blob-positions and -bucket-blobs 1 or more")
	}
	dir, err := os.MkdirTemp("", "plan-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	raw, err := embedded.Open(embedded.Config{Dir: dir, SpillToDisk: true})
	if err != nil {
		return fmt.Errorf("opening embedded storage: %w", err)
	}
	defer raw.Close()
	b := board.MustNew(8)
	mt := &meter{origin: message.StandardOrigin(b), plies: map[int]*plyMeter{}}
	metered := storage.NewMetered(raw)
	be := storage.Wrap(metered, mt.middleware)
	cfg := pipeline.DefaultRunConfig()
	cfg.Name, cfg.Target = "measure", *plies
	cfg.Sizes = runstore.NewSizes(*blobPositions, *bucketBlobs, *growFrom, *fanIn)
	cfg = cfg.WithDefaults()
	ctx := context.Background()
	pipeline.WorkerGC.Apply()
	cpu0, start := cpuSeconds(), time.Now()
	rep, err := pipeline.RunLocal(ctx, be, cfg, *workers, pipeline.WorkerConfig{}, nil, nil)
	if err != nil {
		return fmt.Errorf("running the pipeline: %w", err)
	}
	wall, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
	blobs, err := raw.Container(pipeline.Container(cfg.Name)).List(ctx, "")
	if err != nil {
		return fmt.Errorf("listing the run's blobs: %w", err)
	}
	m := plan.Measurement{
		Date: start.UTC().Format(time.RFC3339), Machine: *machine,
		Command: fmt.Sprintf("go run%s ./plan/internal/measure -plies %d -workers %d -grow-from %d -merge-fan-in %d -blob-positions %d -bucket-blobs %d", pgoFlag(), *plies, *workers, *growFrom, *fanIn, *blobPositions, *bucketBlobs),
		Board:   8, Target: *plies, Workers: *workers, BlobPositions: cfg.BlobPositions, BucketBlobs: cfg.BucketBlobs,
		GrowFrom: cfg.GrowFrom, MergeFanIn: cfg.MergeFanIn,
		WallSeconds: wall, CPUSeconds: cpu,
	}
	// The machine's yardstick, timed right after the run, for plans
	// calibrated to other machines (plan.Calibration).
	if m.YardstickNs, err = timeYardstick(); err != nil {
		return err
	}
	split := mt.split(metered.Stats())
	for _, p := range rep.Plies {
		mp := plan.MeasuredPly{Ply: p.Ply, Positions: p.Positions, Edges: p.Edges, Categories: split[p.Ply],
			Finals: p.Blobs, Buckets: p.Merges, Combines: p.Combines, Segments: p.BlobReads}
		for _, bl := range blobs {
			if strings.HasPrefix(bl.Name, runstore.PlyFolder(p.Ply)) {
				mp.StoredBytes += bl.Size
			}
		}
		if pm := mt.plies[p.Ply]; pm != nil {
			mp.Partitions = len(pm.partitions)
			for _, n := range pm.partitions {
				mp.HottestPartition = max(mp.HottestPartition, n)
			}
		}
		m.Plies = append(m.Plies, mp)
	}
	for _, u := range split[noPly] {
		m.NoPly = m.NoPly.Add(u)
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if _, err := plan.ParseMeasurement(data); err != nil {
		return err
	}
	return os.WriteFile(*out, append(data, '\n'), 0o644)
}

// pgoFlag is the -pgo flag this program was built with, for the
// record: "" when it was built without a profile. The build records the
// profile's absolute path; the flag names its last three elements
// (cmd/enumerate/default.pgo).
func pgoFlag() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "-pgo" && s.Value != "" {
			parts := strings.Split(filepath.ToSlash(s.Value), "/")
			return " -pgo=" + strings.Join(parts[max(0, len(parts)-3):], "/")
		}
	}
	return ""
}

// timeYardstick times the plan's yardstick in a new process, as
// enumerate -plan -calibrate does (plan.MeasureYardstick says why), and
// returns its CPU ns an edge.
func timeYardstick() (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, "-yardstick")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("timing the yardstick: %w", err)
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("timing the yardstick: %q: %w", out, err)
	}
	return ns, nil
}

// cpuSeconds is the user and system time this process has used.
func cpuSeconds() float64 { return cputime.Process().Seconds() }

// noPly stands for calls made for no ply's message.
const noPly = -1

// meter attributes every storage call to the ply of the message being
// handled and to its category. The billed transactions are counted by
// the storage.Metered it wraps, under a category that names both (see
// label); bytes and table entities are counted here.
type meter struct {
	origin message.Origin
	mu     sync.Mutex
	plies  map[int]*plyMeter
	// dequeued counts, per ply, the dequeues that returned one of its
	// messages: billed under no ply, as the worker cannot know the ply
	// before, and moved to the ply by split.
	dequeued map[int]int64
}

// plyMeter is what meter counts for one ply, by category.
type plyMeter struct {
	usage      map[string]*plan.Usage
	partitions map[string]int64 // table/partition -> entities
}

func label(category string, ply int) string { return category + "@" + strconv.Itoa(ply) }

func (m *meter) middleware(c *storage.Call, next func() error) error {
	cat := storage.CategoryFrom(c.Ctx)
	ply, ok := storage.PlyFrom(c.Ctx)
	if !ok {
		ply = noPly
	}
	c.Ctx = storage.WithCategory(c.Ctx, label(cat, ply))
	err := next()
	if c.Op == storage.QueueDequeue && ply == noPly && len(c.Messages) == 1 {
		if msg, perr := message.ParseMessage(m.origin, c.Messages[0].Text); perr == nil {
			ply = msg.Ply
			m.mu.Lock()
			if m.dequeued == nil {
				m.dequeued = map[int]int64{}
			}
			m.dequeued[ply]++
			m.mu.Unlock()
		}
	}
	m.add(ply, cat, func(u *plan.Usage) {
		u.BytesRead += c.Received
		if err == nil {
			u.BytesWritten += c.Sent
		}
	})
	if c.Op.Service() == storage.ServiceTable && c.Op != storage.TableCreate && c.Op != storage.TableDrop {
		n := int64(1)
		if c.Op == storage.TableQuery || c.Op == storage.TableTransact {
			n = max(1, int64(c.Items))
		}
		m.add(ply, cat, func(u *plan.Usage) { u.Entities += n })
		m.mu.Lock()
		m.ply(ply).partitions[c.Resource+"/"+c.Partition] += n
		m.mu.Unlock()
	}
	if err == nil && c.Body != nil {
		c.Body = &countingBody{ReadCloser: c.Body, add: func(n int64) {
			m.add(ply, cat, func(u *plan.Usage) { u.BytesRead += n })
		}}
	}
	return err
}

func (m *meter) ply(p int) *plyMeter {
	pm := m.plies[p]
	if pm == nil {
		pm = &plyMeter{usage: map[string]*plan.Usage{}, partitions: map[string]int64{}}
		m.plies[p] = pm
	}
	return pm
}

func (m *meter) add(ply int, cat string, f func(*plan.Usage)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pm := m.ply(ply)
	u := pm.usage[cat]
	if u == nil {
		u = &plan.Usage{Ops: map[string]int64{}}
		pm.usage[cat] = u
	}
	f(u)
}

// split returns the usage by ply and category: the billed transactions
// from s, labelled by middleware, with the bytes and entities counted
// here.
func (m *meter) split(s storage.Stats) map[int]map[string]plan.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range s.Ops {
		i := strings.LastIndexByte(o.Category, '@')
		ply, err := strconv.Atoi(o.Category[i+1:])
		if i < 0 || err != nil {
			continue
		}
		cat := o.Category[:i]
		if cat == "" {
			cat = "other"
		}
		pm := m.ply(ply)
		if pm.usage[cat] == nil {
			pm.usage[cat] = &plan.Usage{Ops: map[string]int64{}}
		}
		pm.usage[cat].Ops[o.Service+"."+o.Operation] += o.Count
	}
	// Dequeues that returned a ply's message are that ply's control work.
	dq := storage.QueueDequeue.String()
	for ply, n := range m.dequeued {
		m.ply(ply)
		for _, p := range []struct {
			ply int
			n   int64
		}{{ply, n}, {noPly, -n}} {
			u := m.plies[p.ply].usage["control"]
			if u == nil {
				u = &plan.Usage{Ops: map[string]int64{}}
				m.plies[p.ply].usage["control"] = u
			}
			u.Ops[dq] += p.n
		}
	}
	out := map[int]map[string]plan.Usage{}
	for ply, pm := range m.plies {
		out[ply] = map[string]plan.Usage{}
		for cat, u := range pm.usage {
			if cat == "" {
				cat = "other"
			}
			out[ply][cat] = out[ply][cat].Add(*u)
		}
	}
	return out
}

// countingBody counts the bytes read from an opened blob.
type countingBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.add(int64(n))
	}
	return n, err
}

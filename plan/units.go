package plan

import (
	"math"
	"strings"

	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// Units are a ply's work items under a run's sizes (runstore.Sizes).
// The storage transactions of a ply are counted per unit: an operation of
// a category is a constant number of transactions per unit of its driver
// (see driverOf), fitted to a measured run. Only the segments the merges
// read depend on the sizes in a way that is not a count of items, and
// they have a law of their own (segmentsPerRun).
type Units struct {
	Ply int `json:"ply"`
	// BlobPositions and BucketBlobs are the ply's sizes.
	BlobPositions int `json:"blob_positions"`
	BucketBlobs   int `json:"bucket_blobs"`
	// Positions are the ply's positions; Finals its final blobs; Tasks
	// the expansion tasks that feed it (the previous ply's final blobs);
	// Out the expansion tasks it feeds (its own final blobs, below the
	// target).
	Positions float64 `json:"positions"`
	// Terminal are the ply's terminal positions (terminalAt).
	Terminal float64 `json:"terminal"`
	Finals   float64 `json:"finals"`
	Tasks    float64 `json:"tasks"`
	Out      float64 `json:"expansions_out"`
	// Buckets are the bucket merges; Levels the combine levels (none
	// without) and Combines their tasks; Requeues the messages sent
	// again: one for each of the last level's ranges past the first,
	// whose first bucket sends itself after the range's others, and one
	// for each of the first level's groups past the first, likewise
	// (dedup's treeChildren says why).
	Buckets  float64                 `json:"buckets"`
	Levels   []runstore.CombineLevel `json:"levels,omitempty"`
	Combines float64                 `json:"combines,omitempty"`
	Requeues float64                 `json:"requeues,omitempty"`
	// Segments are the blob segments every merge step reads.
	Segments float64 `json:"segments"`
	// FanIn is the most runs one merge step reads.
	FanIn float64 `json:"fan_in"`
}

// The drivers of a ply's transactions.
const (
	drvFinals   = "finals"   // a ply's final blobs: merge outputs, results, resolutions
	drvKnown    = "known"    // a ply's positions (at the target, its terminal ones), a share of which notify their parents (see baseOf)
	drvParents  = "parents"  // the previous ply's final blobs (notices sent to them)
	drvOut      = "out"      // expansion tasks the ply feeds
	drvTasks    = "tasks"    // expansion runs swept when the ply is final
	drvBuckets  = "buckets"  // merge steps: bucket merges and combines
	drvSegments = "segments" // segments read by the merges
	drvMessages = "messages" // messages handled: polling and deleting
	drvParts    = "parts"    // the sweep's listings: a ply's parts
	drvPly      = "ply"      // once a ply
)

// driverOfOp names the driver of an operation of a category.
func driverOfOp(cat, op string) string {
	switch cat {
	case task.CategoryEnumeration:
		return drvOut
	case task.CategoryControl:
		return drvMessages
	case task.CategoryBacktrack:
		switch op {
		case "queue.enqueue":
			return drvParents
		case "table.transact":
			return drvKnown
		}
		return drvFinals
	case task.CategoryDedup:
		switch {
		case op == "blob.open":
			return drvSegments
		case op == "blob.delete":
			return drvTasks
		case op == "blob.list":
			return drvParts
		case op == "blob.put" || op == "blob.put_new" || op == "blob.get":
			return drvPly
		case strings.HasPrefix(op, "table."):
			return drvBuckets
		}
	}
	return drvFinals
}

// sourceBytesPerPosition is what a final blob's backtracking rows take a
// position: 2.1 to 2.8 bytes at plies 8 to 10 (packed's TestSizes,
// docs/performance.md), rising slowly with the ply.
const sourceBytesPerPosition = 3

// sourceBatches is the transactions that one final blob's backtracking
// rows take to write (runstore.PutSources): one batch up to about
// 660,000 positions, two for the million of the deepest plies' blobs.
func sourceBatches(u Units) float64 {
	return float64(runstore.PayloadBatches(u.BlobPositions * sourceBytesPerPosition))
}

// baseOf is the part of an operation's transactions that its driver does
// not drive: of the backtracking table's transactions, the batches of a
// final blob's rows (sourceBatches; at the target ply, whose rows are
// its terminal positions' only, one batch). The rest are notices
// (noticesOf).
func baseOf(cat, op string, u Units) float64 {
	if !isNotice(cat, op) {
		return 0
	}
	if u.Out == 0 {
		return u.Finals
	}
	return sourceBatches(u) * u.Finals
}

// isNotice says whether an operation's transactions past its base are
// notices.
func isNotice(cat, op string) bool { return cat == task.CategoryBacktrack && op == "table.transact" }

// A resolved final blob sends its known results to its parents' blobs,
// one payload a parent blob, and results are known (in a run short of the
// game's end) for the few positions that a terminal position below
// decides or bounds: at the target ply, its terminal positions
// (terminalAt), and at a ply before it a share of its positions. Their
// number follows that driver (drvKnown), as long as a final blob's known
// positions are few: a run with small blobs sends about as many as one with large
// blobs, many times fewer a final blob (a run to ply 10 with 16-position
// blobs, 43 at ply 9; one to ply 13 with 65,536, 7,658 at ply 12). But
// the known positions come in clusters, whose parents lie in a few
// parent blobs, so with large blobs a final blob's notices saturate:
// noticesOf(x), for x the notices that the share alone gives, is
// x*c/(x+c) with c = noticeBlobs a final blob. The pairs of measured runs
// of one ply with fixed and growing sizes (a1a67f7's, 2026-11-29: plies
// 11 and 12 interior, 13 the target) gave c/finals = 8.7, 10.9 and 8.3;
// those in testdata now, of 33bf9d7, make the same transactions within
// 1%. An interior ply's share is the one measured; a deeper target
// has more positions decided below it, which the plan does not foresee.
const noticeBlobs = 9

// noticesOf is the notices that a ply of units u sends, given x, what
// its share of the positions alone would send (see noticeBlobs).
func noticesOf(u Units, x float64) float64 {
	c := noticeBlobs * u.Finals
	if x <= 0 || c <= 0 {
		return 0
	}
	return x * c / (x + c)
}

// unsaturated is noticesOf's inverse: the notices that the share alone
// would send, for a ply of units u that sent n. A ply that sent nine
// tenths of the cap or more is taken at nine tenths, where the inverse
// starts to run away.
func unsaturated(u Units, n float64) float64 {
	c := noticeBlobs * u.Finals
	if n <= 0 || c <= 0 {
		return 0
	}
	n = min(n, 0.9*c)
	return n * c / (c - n)
}

// entityDriver is the driver of a category's table entities: that of its
// queries.
func entityDriver(cat string) string { return driverOfOp(cat, "table.query") }

// value is a driver's count in a ply's units. A combine task costs what
// a bucket merge does in table rows and messages, plus one blob written.
func (u Units) value(driver string) float64 {
	switch driver {
	case drvFinals:
		return u.Finals + u.Combines
	case drvKnown:
		if u.Out == 0 { // the target ply: only its terminal positions are known
			return u.Terminal
		}
		return u.Positions
	case drvParents:
		return u.Tasks
	case drvOut:
		return u.Out
	case drvTasks:
		return u.Tasks + u.Combines
	case drvBuckets:
		return u.Buckets + u.Combines
	case drvSegments:
		// Each merge step also reads its list of inputs in three ranged
		// reads.
		return u.Segments + 3*(u.Buckets+u.Combines)
	case drvMessages:
		return u.Out + u.Finals + u.Buckets + u.Combines + u.Requeues
	case drvParts:
		// The sweep lists each expansion task's, combine task's and
		// bucket's prefix (pipeline's sweep), and the three prefixes of
		// the working blobs; a small ply's one leaf lists its folder
		// once instead, which the constant per part overstates by a
		// few listings.
		return u.Tasks + u.Combines + u.Buckets + float64(len(runstore.WorkingBlobPrefixes(u.Ply)))
	case drvPly:
		return 1
	}
	return 0
}

// segmentLaw is how many buckets one sorted run has entries in: about
// A x buckets^Exp, never more than buckets. Measured runs put Exp near
// 3/4, and show no dependence on the run's size: a run's children spread
// over the ply as widely whether it comes from 65,536 parents or 262,144.
type segmentLaw struct{ A, Exp float64 }

func (l segmentLaw) per(buckets float64) float64 {
	if buckets <= 1 {
		return buckets
	}
	return min(buckets, l.A*math.Pow(buckets, l.Exp))
}

// unitsAt works out a ply's units from its positions and edges under
// sizes (shapeAt).
func (m *Model) unitsAt(s runstore.Sizes, ply, target int, positions, edges []int64) Units {
	u := Units{Ply: ply, Positions: float64(positions[ply]), Terminal: terminalAt(ply, float64(positions[ply])), BlobPositions: s.BlobPositionsAt(ply), BucketBlobs: s.BucketBlobsAt(ply)}
	u.Tasks, u.Buckets, u.Finals = m.shapeAt(s, ply, positions, edges)
	if ply < target {
		u.Out = u.Finals
	}
	u.Levels = s.Levels(int(u.Tasks), int(u.Buckets))
	if len(u.Levels) == 0 {
		u.Segments = u.Tasks * m.segments.per(u.Buckets)
		u.FanIn = u.Tasks
		return u
	}
	// The first level reads each expansion run's segments of its
	// ranges; a level above, each run below once for each of its ranges
	// that overlap the run's (ranges grow finer level by level); the
	// bucket merges, each last-level group's segments of their buckets.
	runs, ranges := u.Tasks, 0.0
	for k, l := range u.Levels {
		g, r := float64(l.Groups), float64(l.Ranges)
		u.Combines += g * r
		if k == 0 {
			u.Segments += runs * m.segments.per(r)
		} else {
			u.Segments += runs * max(r, ranges)
		}
		u.FanIn = max(u.FanIn, math.Ceil(runs/g))
		runs, ranges = g, r
	}
	u.Segments += runs * m.segments.per(u.Buckets)
	u.FanIn = max(u.FanIn, runs)
	u.Requeues = requeues(u.Levels)
	return u
}

// requeues is how many messages a ply with combine levels sends again:
// one for each range of its last level past the first, and one for each
// group of its first level past the first.
func requeues(levels []runstore.CombineLevel) float64 {
	if len(levels) == 0 {
		return 0
	}
	return float64(levels[len(levels)-1].Ranges - 1 + levels[0].Groups - 1)
}

// shapeAt is a ply's expansion tasks (the final blobs of the ply
// before), buckets and final blobs under sizes: buckets are the ply's
// edges over a bucket's capacity (the splitters count a child once per
// parent), at most what its tasks allow (runstore.Sizes.MostBuckets);
// final blobs fill up but for the last of each bucket.
func (m *Model) shapeAt(s runstore.Sizes, ply int, positions, edges []int64) (tasks, buckets, finals float64) {
	tasks, buckets = 1, 1
	if ply > 0 {
		_, _, tasks = m.shapeAt(s, ply-1, positions, edges)
		buckets = min(m.bucketsAt(s, ply, edges), float64(s.MostBuckets(int(tasks))))
	}
	return tasks, buckets, finalsOf(positions[ply], s.BlobPositionsAt(ply), buckets)
}

// bucketsAt is a ply's buckets by its edges alone: one at ply 0, else
// its edges over a bucket's capacity, at most runstore.MaxBuckets.
func (m *Model) bucketsAt(s runstore.Sizes, ply int, edges []int64) float64 {
	if ply == 0 {
		return 1
	}
	return min(max(1, math.Ceil(m.bucketFill*float64(edges[ply])/edgesPerBucket(s, ply))), runstore.MaxBuckets)
}

// edgesPerBucket is how many edges fill one of a ply's buckets under
// sizes: its blobs' positions times its blobs, since the splitters count
// a child once per parent. bucketFill is the measured buckets over the
// edges per bucket.
func edgesPerBucket(s runstore.Sizes, ply int) float64 {
	return float64(s.BlobPositionsAt(ply)) * float64(s.BucketBlobsAt(ply))
}

func finalsOf(positions int64, blobPositions int, buckets float64) float64 {
	if positions == 0 {
		return 0
	}
	return math.Ceil(float64(positions)/float64(blobPositions) + buckets/2)
}

// measuredUnits reads a measured ply's units from what it recorded, or,
// for runs measured before the units were recorded, from its operations:
// a results blob per final blob, a marker per bucket, a C message per
// expansion task.
func measuredUnits(m Measurement, ply int) Units {
	p := m.Plies[ply]
	ops := func(cat, op string) float64 { return float64(p.Categories[cat].Ops[op]) }
	sizes := m.sizes()
	u := Units{Ply: ply, Positions: float64(p.Positions), Terminal: terminalAt(ply, float64(p.Positions)), Finals: float64(p.Finals), Buckets: float64(p.Buckets), Combines: float64(p.Combines), Segments: float64(p.Segments),
		BlobPositions: sizes.BlobPositionsAt(ply), BucketBlobs: sizes.BucketBlobsAt(ply)}
	if u.Finals == 0 {
		u.Finals = ops(task.CategoryBacktrack, "blob.put")
		u.Buckets = ops(task.CategoryDedup, "table.add")
		u.Segments = max(0, ops(task.CategoryDedup, "blob.open")-3*u.Buckets)
	}
	if ply < m.Target {
		u.Out = u.Finals
	}
	u.Tasks = 1
	if ply > 0 {
		u.Tasks = measuredUnits(m, ply-1).Finals
	}
	if u.Combines > 0 {
		u.Levels = sizes.Levels(int(u.Tasks), int(u.Buckets))
		u.Requeues = requeues(u.Levels)
	}
	return u
}

// opsAt is the transactions of a category's operations in a ply of kind
// k with units u.
func (m *Model) opsAt(k kind, cat string, u Units) map[string]int64 {
	out := map[string]int64{}
	for op, per := range m.perUnit[k][cat] {
		driven := per * u.value(driverOfOp(cat, op))
		if isNotice(cat, op) {
			driven = noticesOf(u, driven)
		}
		if n := round(baseOf(cat, op, u) + driven); n > 0 {
			out[op] = n
		}
	}
	return out
}

// combineCPUShare is the CPU a combine level adds, as a share of the CPU
// per edge handled: it decodes, merges and encodes every edge of the ply
// once more, which is about a third of what an edge costs through
// expansion, merging and resolution (estimated from the profile of a
// merge, not measured on a run).
const combineCPUShare = 0.35

// combinedEdges is what a ply of units u and edges edges adds to the
// edges it handles for its combine levels: each merges the ply's edges
// once more, at combineCPUShare of an edge's CPU. The plan (Make) and
// the CPU's fit (fitCPU) both count it so.
func combinedEdges(u Units, edges int64) float64 {
	return float64(len(u.Levels)) * combineCPUShare * float64(edges)
}

// Memory of one worker loop, per task kind (see workerPeak).
const (
	entryBytes      = 32       // a child and its parent, sorted in memory by an expansion
	readerBytes     = 72 << 10 // one block of 2,048 edges, raw and decoded
	streamBytes     = 16 << 10 // an input's stream buffer (dedup's inputBuffer)
	workerBaseBytes = 64 << 20 // the runtime, the storage client, buffers
)

// workerPeak is the most memory one worker loop holds for a task of a
// ply with units u: an expansion of the previous ply's final blob sorts
// its children in memory and packs them (4 bytes an edge); a merge step
// holds a block of each of its inputs (two with read-ahead, at most 256
// inputs) and each input's stream buffer, and a final blob's keys and
// sources; a resolve task holds a final blob's positions and results.
func workerPeak(u Units, positions, edges []int64) int64 {
	var expand float64
	if u.Ply > 0 && positions[u.Ply-1] > 0 {
		perParent := float64(edges[u.Ply]) / float64(positions[u.Ply-1])
		children := perParent * float64(min(int64(u.BlobPositions), positions[u.Ply-1]))
		prev := float64(u.BlobPositions) // the previous ply's blobs are no larger
		expand = children*entryBytes + children*4 + prev*24
	}
	blocks := 1.0
	if u.FanIn <= 256 {
		blocks = 2
	}
	merge := u.FanIn*(blocks*readerBytes+streamBytes) + float64(u.BlobPositions)*8
	resolve := float64(u.BlobPositions) * 48
	return int64(workerBaseBytes + max(expand, merge, resolve))
}

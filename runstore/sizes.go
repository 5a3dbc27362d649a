package runstore

import "math"

// Sizes are the rules that size a run's work, ply by ply. They are part
// of the run's settings, so every worker sizes every ply the same way.
//
// A bucket merge reads one segment of every expansion run that has
// children in its bucket, so with fixed sizes its reads grow as
// (expansion tasks) x (buckets): quadratically in the ply. Two rules keep
// them linear:
//
//   - Growth. From ply GrowFrom on, final blobs double in size each ply
//     (BlobPositionsAt), and from the ply after, buckets too
//     (BucketBlobsAt), up to caps that keep an expansion task's sort in
//     memory and a bucket's cuts in one marker. The ply's positions grow
//     about sevenfold a ply, so tasks and buckets grow about 3.5 and 1.75
//     times a ply instead of 7 and 7. Buckets start a ply later because
//     the first plies that grow have few buckets, and growing them at
//     once left a core idle while a ply's last merges ran (see
//     docs/performance.md).
//   - Combining. A ply fed by more expansion tasks than MergeFanIn gets a
//     second merge level (Levels): consecutive tasks form groups, the
//     buckets form ranges of consecutive buckets, and a combine task
//     merges one group's segments of one range into one run, cut at the
//     range's buckets. Each bucket merge then reads one segment a group
//     instead of one a task. Reads go from tasks x buckets to
//     tasks x ranges + groups x buckets, both linear when groups and
//     ranges are about the square root of the tasks and buckets. Past
//     MergeFanIn^2 tasks one level would leave a merge more runs than
//     the fan-in, so the ply gets more levels, each a combine of the
//     runs of the one before.
//   - Wide merges. A ply fed by more than MergeFanIn tasks but at most
//     twice as many gets no level: its buckets are at most MinRanges
//     (MostBuckets), each merging every task's run at once. Its merges
//     read tasks x MinRanges segments, no more than a level's combines
//     alone would (tasks x ranges, ranges >= MinRanges), and each edge
//     is merged once instead of twice: at 8x8 ply 14 with the default
//     sizes (1,759 tasks) the level's combines took a fifth of the run's
//     CPU (docs/performance.md). The merges hold a block of up to twice
//     the fan-in's runs, there are fewer of them to share out, and on
//     one machine the ply holds all its expansion runs until its last
//     merge (41.5 GB at the peak there, against 27.6 with the level).
//
// Invariants: BlobPositionsAt and BucketBlobsAt never fall as the ply
// grows, and never below the base sizes; every level Levels returns has
// groups >= 2 and min(buckets, MinRanges)
// <= ranges <= buckets; with tasks <= MergeFanIn^(MaxCombineLevels+1),
// no group holds more than MergeFanIn runs and the last level has at most
// MergeFanIn groups; a ply without levels has at most MergeFanIn tasks,
// or at most wideFanIn x MergeFanIn and at most MostBuckets buckets.
type Sizes struct {
	// BlobPositions caps a final blob's positions before GrowFrom.
	BlobPositions int
	// BucketBlobs is a bucket's size in final blobs before GrowFrom.
	BucketBlobs int
	// GrowFrom is the first ply whose sizes double; 0 means never.
	GrowFrom int
	// MergeFanIn is the most expansion runs one merge reads before the
	// ply gets a combine level, or twice as many in wide buckets; 0
	// means no limit.
	MergeFanIn int
}

// NewSizes is the size rules of a run, each given: the one way Sizes are
// built from their numbers (flags, the settings row, a measurement), so
// that a rule added to Sizes is a parameter more, which the compiler
// then asks of every one of them instead of leaving it zero.
func NewSizes(blobPositions, bucketBlobs, growFrom, mergeFanIn int) Sizes {
	return Sizes{BlobPositions: blobPositions, BucketBlobs: bucketBlobs, GrowFrom: growFrom, MergeFanIn: mergeFanIn}
}

// Caps of the growth.
const (
	// MaxGrownBlobPositions caps the growth of final blobs: an expansion
	// task sorts the children of one final blob in memory, about 10 of
	// them a position at 32 bytes each (320 MiB at this cap).
	MaxGrownBlobPositions = 1 << 20
	// MaxGrownBucketBlobs caps the growth of buckets.
	MaxGrownBucketBlobs = 1024
)

// doublings is how many times the sizes of ply have doubled.
func (s Sizes) doublings(ply int) int {
	if s.GrowFrom <= 0 || ply < s.GrowFrom {
		return 0
	}
	return min(ply-s.GrowFrom+1, 30)
}

// BlobPositionsAt caps the positions of one final blob of ply.
func (s Sizes) BlobPositionsAt(ply int) int {
	return grow(s.BlobPositions, s.doublings(ply), MaxGrownBlobPositions)
}

// BucketBlobsAt is the size of ply's buckets in its final blobs: it
// doubles from the ply after GrowFrom.
func (s Sizes) BucketBlobsAt(ply int) int {
	return grow(s.BucketBlobs, max(0, s.doublings(ply)-1), MaxGrownBucketBlobs)
}

// grow doubles base n times, up to limit, but never below base.
func grow(base, n, limit int) int {
	v := base
	for i := 0; i < n && v < limit; i++ {
		v *= 2
	}
	return max(base, min(v, limit))
}

// Levels says how a ply fed by tasks expansion runs and cut into
// buckets is merged: none when every bucket merge reads the expansion
// runs themselves; otherwise its combine levels, the first over the
// expansion runs, each over the runs of the one before (CombineLevel).
//
// A combine task and a bucket merge each read one segment of each run of
// their group, so with d levels each level cuts the runs by about the
// (d+1)-th root of tasks: level k has about tasks^(1-k/(d+1)) groups,
// and the bucket merges read about tasks^(1/(d+1)) runs. d is the
// fewest levels that keep that within MergeFanIn (one level up to
// MergeFanIn^2 tasks), and at most MaxCombineLevels. One level has
// groupsPerRoot times the square root of the tasks, at most MergeFanIn.
// A level's ranges make each of its tasks about as much work as a
// bucket merge (each range holds about groups buckets), but are at
// least MinRanges.
//
// Many groups and ranges keep the disk a ply holds bounded: a group's
// inputs are deleted once its combines are done, and the last level's
// runs of a range once its buckets are merged (see Spent). While the
// combines run, a ply holds its expansion runs and what they have been
// combined into, and one group's runs (1/groups of them) twice; while
// the merges run, its combined runs and what has been merged of them,
// and one range's final blobs (1/ranges of them) beside the combined
// runs they come from. On one machine, where a ply has one level, both
// count: at 8x8 ply 14 the root (42 groups, 16 ranges) peaked in the
// combines, at 49.1 GB; twice the root over 8 ranges (84 and 8) in the
// merges, at 49.6 GB, their combined runs larger by a GB (fewer
// duplicates go within smaller groups); one and a half times the root
// over at least 12 ranges (63 and 12) peaked at 48.8 GB, in the merges
// (docs/performance.md), and its combines and merges read fewer
// segments in all (at ply 14, 14,830 by the plan, where 42 x 16 read
// 17,285).
func (s Sizes) Levels(tasks, buckets int) []CombineLevel {
	if s.MergeFanIn <= 0 || tasks <= s.MergeFanIn || buckets < 1 || s.wide(tasks) && buckets <= MinRanges {
		return nil
	}
	fanIn := float64(max(2, s.MergeFanIn))
	depth := 1
	for reach := fanIn * fanIn; reach < float64(tasks) && depth < MaxCombineLevels; reach *= fanIn {
		depth++
	}
	levels := make([]CombineLevel, depth)
	runs := tasks
	for k := range levels {
		share := 1 - float64(k+1)/float64(depth+1)
		root := math.Pow(float64(tasks), share)
		if depth == 1 {
			root = min(groupsPerRoot*root, float64(s.MergeFanIn))
		}
		groups := max((runs+s.MergeFanIn-1)/s.MergeFanIn, int(math.Ceil(root-1e-9)))
		groups = max(2, min(groups, runs-1))
		ranges := max(min(buckets, MinRanges), int(math.Ceil(float64(buckets)/float64(groups))))
		levels[k] = CombineLevel{Groups: groups, Ranges: min(ranges, buckets)}
		runs = groups
	}
	return levels
}

// MostBuckets is the most buckets a ply fed by tasks expansion runs is
// cut into: MinRanges when its runs are merged in wide buckets (see
// Sizes), else MaxBuckets.
func (s Sizes) MostBuckets(tasks int) int {
	if s.wide(tasks) {
		return MinRanges
	}
	return MaxBuckets
}

// wide reports whether a ply fed by tasks expansion runs merges them in
// wide buckets, with no combine level (see Sizes).
func (s Sizes) wide(tasks int) bool {
	return s.MergeFanIn > 0 && tasks > s.MergeFanIn && tasks <= wideFanIn*s.MergeFanIn
}

// wideFanIn is how many times MergeFanIn runs a wide bucket merges.
const wideFanIn = 2

// MinRanges is the fewest ranges a combine level cuts its buckets into
// (or every bucket, when there are fewer): a range's combined runs are
// deleted only once all its buckets are merged, so while the ply's final
// blobs are written it also holds up to 1/ranges of them beside the
// combined runs they come from (see Levels).
const MinRanges = 12

// groupsPerRoot is how many groups a ply of one combine level has for
// each square root of its tasks (see Levels).
const groupsPerRoot = 1.5

// Span is the items [Lo, Hi) of one part of n items cut into parts
// nearly equal parts: the first n mod parts parts hold one more.
type Span struct{ Lo, Hi int }

// SpanOf returns part i of n items cut into parts parts.
func SpanOf(i, n, parts int) Span {
	q, r := n/parts, n%parts
	lo := i*q + min(i, r)
	hi := lo + q
	if i < r {
		hi++
	}
	return Span{lo, hi}
}

// PartOf returns the part, of n items cut into parts parts, that holds
// item j (the inverse of SpanOf).
func PartOf(j, n, parts int) int {
	q, r := n/parts, n%parts
	if j < r*(q+1) {
		return j / (q + 1)
	}
	return r + (j-r*(q+1))/q
}

// Package plan predicts, without running anything, what enumerating 8x8
// through a target ply takes: positions and edges, storage transactions
// by category, bytes stored and moved, CPU, the cost of the
// transactions and of the CPU at list prices, and the storage accounts,
// work-queue shards and table partitions that keep every ply within
// Azure's scalability targets.
//
// The model is fitted to measured runs (Measurement, written by
// plan/internal/measure; the ones fitted by default are in testdata/).
// A ply's storage transactions are counted per unit of work under the
// run's size rules (Units: final blobs, expansion tasks, buckets, combine
// tasks, segments read), each operation a constant per unit of its
// driver, fitted to the largest run measured with fixed sizes; the
// segments a sorted run has in a ply's buckets follow a power law of the
// buckets fitted to every measured ply. Bytes moved and table entities
// are straight lines in the edges the ply's messages handle, and CPU is
// a constant per edge handled plus one per segment the merges read,
// fitted to the newest run with growing sizes (and one with fixed sizes
// of the same day). That CPU is the measuring machine's; a plan for
// other machines scales it by their CPU for a small run of the pipeline
// against that machine's, which the measurements record (Calibration).
// Positions come
// from pipeline.EstimatePositions; edges per position grow by a
// measured factor per ply past the measured plies. The worker loops'
// polls that find no message are a line of their own (Polling), a rate
// per loop and second of the plan's wall time fitted to sim runs.
package plan

import (
	"cmp"
	"embed"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/task"
)

// kind is what a run does with a ply's positions: an interior ply is
// expanded into the next; the target ply is only resolved. The two cost
// differently, so each has its own lines.
type kind int

const (
	interior kind = iota
	target
	numKinds
)

// line is q(d) = max(0, fixed + slope*d^exp): one quantity against a
// driver; exp is 1 but for merging (see powerThrough).
type line struct{ fixed, slope, exp float64 }

// through is the straight line through (d0, q0) and (d1, q1), d1 > d0;
// a fixed part below zero is clamped, which keeps (d1, q1) exact.
func through(d0, q0, d1, q1 float64) line {
	s := (q1 - q0) / (d1 - d0)
	f := q0 - s*d0
	if f < 0 {
		f, s = 0, q1/d1
	}
	return line{f, s, 1}
}

// powerThrough is the curve with fixed part f through (d1, q1) and
// (d2, q2), d2 > d1, its exponent kept within 1 to 2: a merge reads one
// segment per expansion blob of the previous ply that has children in
// its bucket, so the reads grow faster than the edges (ply 11 to 12:
// 27 times the reads for 7 times the edges), but no faster than blobs
// times buckets.
func powerThrough(f, d1, q1, d2, q2 float64) line {
	if q1 <= f || q2 <= f {
		return through(d1, q1, d2, q2)
	}
	e := min(2, max(1, math.Log((q2-f)/(q1-f))/math.Log(d2/d1)))
	return line{f, (q2 - f) / math.Pow(d2, e), e}
}

func (l line) at(d float64) float64 { return max(0, l.fixed+l.slope*math.Pow(d, l.exp)) }

// usageLine predicts a Usage: one line per operation and per figure.
type usageLine struct {
	ops                     map[string]line
	written, read, entities line
}

// fitUsage fits every figure of a Usage with fit, given the figure at
// each point.
func fitUsage(us []Usage, fit func(q []float64) line) usageLine {
	figure := func(get func(Usage) int64) line {
		q := make([]float64, len(us))
		for i, u := range us {
			q[i] = float64(get(u))
		}
		return fit(q)
	}
	ul := usageLine{
		ops:      map[string]line{},
		written:  figure(func(u Usage) int64 { return u.BytesWritten }),
		read:     figure(func(u Usage) int64 { return u.BytesRead }),
		entities: figure(func(u Usage) int64 { return u.Entities }),
	}
	var all Usage
	for _, u := range us {
		all = all.Add(u)
	}
	for op := range all.Ops {
		ul.ops[op] = figure(func(u Usage) int64 { return u.Ops[op] })
	}
	return ul
}

func (ul usageLine) at(d float64) Usage {
	u := Usage{Ops: map[string]int64{}, BytesWritten: round(ul.written.at(d)), BytesRead: round(ul.read.at(d)), Entities: round(ul.entities.at(d))}
	for op, l := range ul.ops {
		if n := round(l.at(d)); n > 0 {
			u.Ops[op] = n
		}
	}
	return u
}

func round(x float64) int64 { return int64(math.Round(x)) }

// Model predicts a run's plies; Fit makes one from measurements.
type Model struct {
	// Fitted names the measurements it was fitted to.
	Fitted []string
	// lines[kind][category] predicts a ply's storage work in a category
	// from its driver (see driver).
	lines [numKinds]map[string]usageLine
	// stored predicts the blob bytes a ply keeps from its positions.
	stored line
	// hot[kind] is the share of a ply's table entities that its busiest
	// partition serves, measured with every kind of row in one
	// partition: the completion counts of the ply's resolutions at the
	// target ply (0.74 at plies 11 and 12), of its tasks and buckets
	// below (0.35 to 0.39).
	hot [numKinds]float64
	// CPUPerEdge is CPU seconds per edge handled (see handled), and
	// CPUPerSegment the CPU seconds each segment the merges read adds
	// (opening it, its reader's buffers): runs with fixed sizes, whose
	// merges read far more segments an edge, took a third more CPU an
	// edge than runs with growing sizes.
	CPUPerEdge, CPUPerSegment float64
	// YardstickPerEdge is the CPU seconds an edge of the yardstick run
	// took on the machine of the CPU's measurements (MeasureYardstick):
	// what Calibrate compares another machine with. 0 if not measured.
	YardstickPerEdge float64
	// edges are the measured plies' edges; EdgeGrowth is the factor by
	// which edges per position grow from one ply to the next past them.
	edges      []int64
	EdgeGrowth float64
	// BlobPositions and BucketBlobs are the run settings measured.
	BlobPositions, BucketBlobs int
	// perUnit[kind][category][operation] is the transactions an
	// operation makes per unit of its driver (driverOfOp), from large's
	// last plies; segments is the law of the segments merges read, and
	// bucketFill the buckets a ply has over its edges per bucket, both
	// from every measured ply with buckets to count.
	perUnit [numKinds]map[string]map[string]float64
	// entitiesPerUnit[kind][category] is the table entities a category
	// reads and writes per unit of the driver of its queries: the rows a
	// ply's items read grow with its items (completion, markers, final
	// rows), not with its edges, and small blobs make many items.
	entitiesPerUnit [numKinds]map[string]float64
	segments        segmentLaw
	bucketFill      float64
}

// Fit fits a model to two measured runs of 8x8 with the same settings:
// small, whose target ply gives the fixed cost of a target ply, and
// large, whose target ply gives the cost of a target ply per edge and
// whose last interior ply (target-1) that of an interior ply, its ply 1
// their fixed cost. large must reach ply 3 or more, past small's target.
func Fit(small, large Measurement) (*Model, error) {
	switch {
	case small.Board != 8 || large.Board != 8:
		return nil, fmt.Errorf("fitting the plan: measurements of %dx%d and %dx%d, want 8x8", small.Board, small.Board, large.Board, large.Board)
	case large.Target < 3 || small.Target >= large.Target:
		return nil, fmt.Errorf("fitting the plan: target plies %d and %d, want the small below the large and the large 3 or more", small.Target, large.Target)
	case small.BlobPositions != large.BlobPositions || small.BucketBlobs != large.BucketBlobs:
		return nil, fmt.Errorf("fitting the plan: the measurements' run settings differ")
	}
	m := &Model{
		Fitted:        []string{describe(small), describe(large)},
		BlobPositions: large.BlobPositions, BucketBlobs: large.BucketBlobs,
	}
	for _, p := range large.Plies {
		m.edges = append(m.edges, p.Edges)
	}
	T := large.Target
	edges := large.edgesAt
	// Interior: ply 1 (the smallest with edges) and ply T-1 of large.
	// Target: small's target and large's. Merging (dedup) costs the same
	// whether the ply is the target or not (a ply's dedup work was the
	// same, operation by operation, in the runs to 11 and to 12), so its
	// curve, for both kinds, goes from ply 1 through plies T-1 and T.
	for k, pts := range [numKinds][2]struct {
		run Measurement
		ply int
	}{
		interior: {{large, 1}, {large, T - 1}},
		target:   {{small, small.Target}, {large, T}},
	} {
		m.lines[k] = map[string]usageLine{}
		a, b := pts[0].run.Plies[pts[0].ply], pts[1].run.Plies[pts[1].ply]
		for _, cat := range task.Categories {
			if cat == task.CategoryDedup {
				d := [3]float64{float64(edges(1)), float64(edges(T - 1)), float64(edges(T))}
				m.lines[k][cat] = fitUsage([]Usage{large.Plies[1].Categories[cat], large.Plies[T-1].Categories[cat], large.Plies[T].Categories[cat]},
					func(q []float64) line {
						return powerThrough(through(d[0], q[0], d[1], q[1]).at(0), d[1], q[1], d[2], q[2])
					})
				continue
			}
			d0 := float64(driverOf(pts[0].run.edgesAt, kind(k), cat, a.Ply))
			d1 := float64(driverOf(pts[1].run.edgesAt, kind(k), cat, b.Ply))
			if d1 <= d0 {
				return nil, fmt.Errorf("fitting the plan: %s work of ply %d has no more edges than ply %d's", cat, b.Ply, a.Ply)
			}
			m.lines[k][cat] = fitUsage([]Usage{a.Categories[cat], b.Categories[cat]},
				func(q []float64) line { return through(d0, q[0], d1, q[1]) })
		}
	}
	share := func(p MeasuredPly) float64 {
		var n int64
		for _, u := range p.Categories {
			n += u.Entities
		}
		return float64(p.HottestPartition) / float64(max(n, 1))
	}
	m.hot[interior], m.hot[target] = share(large.Plies[T-1]), share(large.Plies[T])
	p1, pT := large.Plies[1], large.Plies[T]
	m.stored = through(float64(p1.Positions), float64(p1.StoredBytes), float64(pT.Positions), float64(pT.StoredBytes))
	m.fitCPU(large, nil)
	// Edges per position grow irregularly from ply to ply (1.19, 1.20,
	// 1.29 at plies 9 to 11); the factor is the mean over two plies.
	r := func(p int) float64 { return float64(large.Plies[p].Edges) / float64(large.Plies[p].Positions) }
	m.EdgeGrowth = math.Sqrt(r(T) / r(T-2))
	if err := m.fitUnits(large); err != nil {
		return nil, err
	}
	return m, nil
}

// fitUnits fits the transactions per unit to large's last interior ply
// and its target ply, and the segment law and the buckets' fill to every
// ply of large with at least two buckets.
func (m *Model) fitUnits(large Measurement) error {
	T := large.Target
	for k, ply := range [numKinds]int{interior: T - 1, target: T} {
		u := measuredUnits(large, ply)
		m.perUnit[k] = map[string]map[string]float64{}
		m.entitiesPerUnit[k] = map[string]float64{}
		for cat, use := range large.Plies[ply].Categories {
			if d := u.value(entityDriver(cat)); d > 0 {
				m.entitiesPerUnit[k][cat] = float64(use.Entities) / d
			}
			m.perUnit[k][cat] = map[string]float64{}
			for op, n := range use.Ops {
				if d := u.value(driverOfOp(cat, op)); d > 0 {
					driven := max(0, float64(n)-baseOf(cat, op, u))
					if isNotice(cat, op) {
						driven = unsaturated(u, driven)
					}
					m.perUnit[k][cat][op] = driven / d
				}
			}
		}
	}
	// log(segments per run) = log A + Exp log(buckets), least squares.
	var n, sx, sy, sxx, sxy, fill, fills float64
	sizes := large.sizes()
	for ply := 1; ply <= T; ply++ {
		u := measuredUnits(large, ply)
		if u.Buckets < 2 || u.Tasks < 1 || u.Segments <= 0 || u.Combines > 0 {
			continue
		}
		x, y := math.Log(u.Buckets), math.Log(u.Segments/u.Tasks)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
		fill, fills = fill+u.Buckets/(float64(large.Plies[ply].Edges)/edgesPerBucket(sizes, ply)), fills+1
	}
	if n < 2 || n*sxx-sx*sx <= 0 {
		return fmt.Errorf("fitting the plan: %v has %g plies with buckets to fit the merges' reads to, want 2 or more", describe(large), n)
	}
	exp := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	m.segments = segmentLaw{A: math.Exp((sy - exp*sx) / n), Exp: exp}
	m.bucketFill = fill / fills
	return nil
}

// sizes are the size rules the run was measured with.
func (m Measurement) sizes() runstore.Sizes {
	return runstore.NewSizes(m.BlobPositions, m.BucketBlobs, m.GrowFrom, m.MergeFanIn)
}

func describe(m Measurement) string {
	return fmt.Sprintf("target ply %d, measured %s on %s (%.1f s wall, %.1f s CPU)", m.Target, m.Date, m.Machine, m.WallSeconds, m.CPUSeconds)
}

// fitCPU sets CPUPerEdge and CPUPerSegment to what run and other, two
// runs of one code, took: the CPU seconds of each, a constant per edge
// handled plus a constant per segment read, solved for the two. Without
// other, or when the two do not tell the constants apart (as many
// segments an edge, or a negative constant), the segments cost nothing
// apart and run's CPU is all per edge.
func (m *Model) fitCPU(run Measurement, other *Measurement) {
	work := func(r Measurement) (handled, segments float64) {
		for p := range r.Plies {
			u := measuredUnits(r, p)
			handled += float64(handledBy(r.edgesAt, r.Target, p)) + combinedEdges(u, r.edgesAt(p))
			segments += u.Segments
		}
		return handled, segments
	}
	h1, s1 := work(run)
	m.CPUPerEdge, m.CPUPerSegment = run.CPUSeconds/h1, 0
	m.YardstickPerEdge = run.YardstickNs * 1e-9
	if other == nil {
		return
	}
	h2, s2 := work(*other)
	det := h1*s2 - h2*s1
	if det == 0 {
		return
	}
	perEdge := (run.CPUSeconds*s2 - other.CPUSeconds*s1) / det
	perSegment := (h1*other.CPUSeconds - h2*run.CPUSeconds) / det
	if perEdge > 0 && perSegment > 0 {
		m.CPUPerEdge, m.CPUPerSegment = perEdge, perSegment
	}
}

// edgesAt is a measured ply's edges, or 0 past the target.
func (m Measurement) edgesAt(p int) int64 {
	if p < len(m.Plies) {
		return m.Plies[p].Edges
	}
	return 0
}

// driverOf is the edges a ply's work in a category handles: an interior
// ply's expansion writes the edges into the next ply; everything else
// (merging, resolving, their messages) handles the ply's own edges.
func driverOf(edges func(int) int64, k kind, cat string, p int) int64 {
	if k == interior && cat == task.CategoryEnumeration {
		return edges(p + 1)
	}
	return edges(p)
}

// handledBy is the edges a ply's messages handle in a run to target: its
// own (merged, resolved) and, below the target, the next ply's (written
// by its expansion). CPU is a constant per edge handled, and one per
// segment read (Model.CPUPerSegment).
func handledBy(edges func(int) int64, target, p int) int64 {
	n := edges(p)
	if p < target {
		n += edges(p + 1)
	}
	return n
}

// positions8x8 is pipeline.EstimatePositions for 8x8 from the usual
// start, the only board the model covers.
func positions8x8(ply int) (int64, bool) {
	return pipeline.EstimatePositions(pipeline.RunConfig{Config: runstore.Config{Board: 8}}, ply)
}

// Positions is the model's positions of a ply: pipeline.EstimatePositions,
// exact through the counted plies and extrapolated past them
// (extrapolated is true).
func (m *Model) Positions(ply int) (n int64, extrapolated bool, err error) {
	n, ok := positions8x8(ply)
	if !ok {
		return 0, false, fmt.Errorf("no estimate of the positions of ply %d", ply)
	}
	return n, ply >= pipeline.CountedPlies(), nil
}

// Edges is the model's edges of a ply: measured through the measured
// target; past it, the positions times the last measured ply's edges per
// position, grown by EdgeGrowth a ply.
func (m *Model) Edges(ply int, positions int64) int64 {
	if ply < len(m.edges) {
		return m.edges[ply]
	}
	last := len(m.edges) - 1
	lp, _, _ := m.Positions(last)
	ratio := float64(m.edges[last]) / float64(lp) * math.Pow(m.EdgeGrowth, float64(ply-last))
	return round(float64(positions) * ratio)
}

//go:embed testdata/measured-*.json
var measured embed.FS

// Default is the model fitted to the smallest measurement in testdata
// and the largest one measured with fixed sizes, so that the others
// stay checks of the model (see model_test.go): a model fitted to a run
// cannot be checked against it, and a run with growing sizes checks
// what the model says of sizes it was not fitted to. Its CPU per edge
// is the newest measurement's (by Date).
func Default() (*Model, error) {
	runs, err := Measured()
	if err != nil {
		return nil, err
	}
	if len(runs) < 3 {
		return nil, fmt.Errorf("fitting the plan: %d measurements, want 3 or more", len(runs))
	}
	large := -1
	for i, r := range runs[1:] {
		if r.GrowFrom == 0 && r.MergeFanIn == 0 {
			large = i + 1
		}
	}
	if large < 0 {
		return nil, fmt.Errorf("fitting the plan: no measurement with fixed sizes past the first")
	}
	m, err := Fit(runs[0], runs[large])
	if err != nil {
		return nil, err
	}
	// The CPU is the newest run's with growing sizes, the default's: the
	// code's CPU per edge changes more often than its storage work does
	// (issue 39 cut it without changing a transaction), and measuring
	// storage takes the older fixed sizes' many transactions.
	// With the run with fixed sizes measured the same day (the same
	// code), the two tell the CPU of a segment read from that of an
	// edge (fitCPU).
	// (The newest of all, if none grows.)
	grows := func(m Measurement) int { return min(1, max(0, m.GrowFrom)) }
	newest := slices.MaxFunc(runs, func(a, b Measurement) int {
		return cmp.Or(cmp.Compare(grows(a), grows(b)), strings.Compare(a.Date, b.Date))
	})
	if newest.Date != runs[large].Date {
		var other *Measurement
		if sameDay(newest.Date, runs[large].Date) {
			other = &runs[large]
		}
		m.fitCPU(newest, other)
		m.Fitted = append(m.Fitted, "CPU: "+describe(newest))
		if other != nil {
			m.Fitted[len(m.Fitted)-1] += " and " + describe(*other)
		}
	}
	return m, nil
}

// sameDay reports whether two measurement dates (RFC 3339) are of one
// day.
func sameDay(a, b string) bool { return len(a) >= 10 && len(b) >= 10 && a[:10] == b[:10] }

// Measured returns the measurements in testdata, by target ply.
func Measured() ([]Measurement, error) {
	names, err := measured.ReadDir("testdata")
	if err != nil {
		return nil, err
	}
	var out []Measurement
	for _, e := range names {
		if !strings.HasPrefix(e.Name(), "measured-") {
			continue
		}
		data, err := measured.ReadFile(path.Join("testdata", e.Name()))
		if err != nil {
			return nil, err
		}
		m, err := ParseMeasurement(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target < out[j].Target })
	return out, nil
}

package plan

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Limits are the storage scalability targets a plan keeps within.
type Limits struct {
	AccountRequests   float64 `json:"account_requests_per_second"`
	AccountIngress    float64 `json:"account_ingress_bytes_per_second"`
	AccountEgress     float64 `json:"account_egress_bytes_per_second"`
	QueueMessages     float64 `json:"queue_messages_per_second"`
	PartitionEntities float64 `json:"partition_entities_per_second"`
	// Headroom is the share of each target a plan uses: the targets are
	// "high-end targets, but achievable", and a ply's load is not even.
	Headroom float64 `json:"headroom"`
}

// StandardV2 are Azure's documented scalability targets for a standard
// general-purpose v2 storage account (read 2026-11-23):
//   - 20,000 requests/s per account, 25 Gbps ingress and 50 Gbps egress:
//     the defaults for regions not in Azure's list of larger accounts
//     (that list, East US among them, has 40,000 requests/s, 60 Gbps and
//     200 Gbps); https://learn.microsoft.com/azure/storage/common/scalability-targets-standard-account
//   - 2,000 messages/s for a single queue (1 KiB messages);
//     https://learn.microsoft.com/azure/storage/queues/scalability-targets
//   - 2,000 entities/s for a single table partition (1 KiB entities);
//     https://learn.microsoft.com/azure/storage/tables/scalability-targets
var StandardV2 = Limits{
	AccountRequests:   20000,
	AccountIngress:    25e9 / 8,
	AccountEgress:     50e9 / 8,
	QueueMessages:     2000,
	PartitionEntities: 2000,
	Headroom:          0.8,
}

// Names of the limits a ply can be bound by.
const (
	BoundCPU        = "CPU"
	BoundRequests   = "account requests/s"
	BoundIngress    = "account ingress"
	BoundEgress     = "account egress"
	BoundQueue      = "queue messages/s"
	BoundPartitions = "partition entities/s"
)

// Config is what to plan.
type Config struct {
	// Target is the run's target ply.
	Target int
	// Workers is the number of worker loops, each one CPU, when there is
	// no Deadline; with one, the workers are those the deadline needs.
	Workers  int
	Deadline time.Duration
	// Sizes are the run's size rules; the zero value means the
	// pipeline's defaults (pipeline.DefaultRunConfig).
	Sizes  runstore.Sizes
	Limits Limits
	Prices report.Prices
	// VCPUHour is what one vCPU costs for an hour, in US dollars: the
	// price of the plan's CPU seconds (report.DefaultVCPUHour is a list
	// price).
	VCPUHour float64
	// CPUScale is how much more CPU time the work takes on the machines
	// planned for than on the one the model was measured on (Model.Calibrate
	// measures it for this machine); zero means 1, the model's machine.
	CPUScale float64
	// Latency is how long one storage call takes; zero means
	// DefaultLatency. A worker loop makes one call at a time, so a ply
	// takes at least its transactions times Latency over the workers.
	Latency time.Duration
	// PollMax is a worker loop's longest idle back-off, which sets how
	// often idle loops poll (see Polling); zero means a worker
	// process's (pipeline.DefaultWorkerConfig). The loops of one
	// enumerate process back off to pipeline.LocalPollMax.
	PollMax time.Duration
}

// DefaultLatency is a storage call's latency when Config leaves it out:
// a table or queue call within an Azure region takes a few to some tens
// of milliseconds, and `enumerate -storage sim` waits this long by
// default (-sim-latency).
const DefaultLatency = 10 * time.Millisecond

// Validate checks a configuration.
func (c Config) Validate() error {
	switch {
	case c.Target < 0 || c.Target > 60:
		return fmt.Errorf("target ply %d: must be 0 to 60", c.Target)
	case c.Deadline < 0:
		return fmt.Errorf("deadline %s: must be zero (none) or more", c.Deadline)
	case c.Deadline == 0 && c.Workers < 1:
		return fmt.Errorf("%d workers: must be 1 or more", c.Workers)
	case c.Latency < 0:
		return fmt.Errorf("latency %s: must be zero (the default) or more", c.Latency)
	case c.PollMax < 0:
		return fmt.Errorf("longest poll back-off %s: must be zero (the default) or more", c.PollMax)
	case !(c.VCPUHour >= 0):
		return fmt.Errorf("price of a vCPU hour %g: must be zero or more", c.VCPUHour)
	case !(c.CPUScale >= 0) || math.IsInf(c.CPUScale, 1):
		return fmt.Errorf("CPU scale %g: must be zero (the model's machine) or more, and finite", c.CPUScale)
	}
	l := c.Limits
	if min(l.AccountRequests, l.AccountIngress, l.AccountEgress, l.QueueMessages, l.PartitionEntities) <= 0 || l.Headroom <= 0 || l.Headroom > 1 {
		return fmt.Errorf("limits %+v: every target must be more than zero and the headroom 0 to 1", l)
	}
	return nil
}

// Plan is the prediction for a run, ply by ply.
type Plan struct {
	Board     int      `json:"board"`
	TargetPly int      `json:"target_ply"`
	Fitted    []string `json:"fitted_to"`
	// Sizes are the size rules planned for.
	Sizes runstore.Sizes `json:"sizes"`
	// Workers is the worker loops planned for (one CPU each): given, or
	// what the deadline needs.
	Workers         int     `json:"workers"`
	DeadlineSeconds float64 `json:"deadline_seconds,omitempty"`
	// CPUPerEdge (seconds per edge handled), CPUPerSegment (seconds per
	// segment the merges read) and EdgeGrowth are the model's, the first
	// two times CPUScale; Limits, Prices and VCPUHour what the plan was
	// made with.
	CPUPerEdge    float64       `json:"cpu_seconds_per_edge"`
	CPUPerSegment float64       `json:"cpu_seconds_per_segment"`
	CPUScale      float64       `json:"cpu_scale"`
	EdgeGrowth    float64       `json:"edges_per_position_growth"`
	Limits        Limits        `json:"limits"`
	Prices        report.Prices `json:"prices"`
	VCPUHour      float64       `json:"vcpu_hour_usd"`
	// EmbeddedDiskBytes is the most disk the run takes on the embedded
	// backend (pipeline.EstimateDisk), when it is run on one machine.
	EmbeddedDiskBytes int64 `json:"embedded_peak_disk_bytes"`
	Plies             []Ply `json:"plies"`
	// Polling is the worker loops' polls that find no message, over the
	// plan's wall time: no ply's, and in no ply's transactions.
	Polling Polling `json:"polling"`
	// Total sums the plies and, in its transactions (as control) and
	// their cost, the polling; its shard counts and binding limit are
	// the largest any ply needs.
	Total Ply `json:"total"`
}

// Ply is the prediction for one ply: the work of its messages, as the
// run report counts it (report.Ply.Transactions) but for the dequeue
// that found each message, which the report counts in no ply and
// plan/internal/measure in the message's; and what the ply needs.
type Ply struct {
	Ply       int   `json:"ply"`
	Positions int64 `json:"positions"`
	Edges     int64 `json:"edges"`
	// Extrapolated says the positions are past the counted plies
	// (pipeline.CountedPlies): grown by a constant factor, not known.
	Extrapolated bool `json:"extrapolated,omitempty"`
	// Units are the ply's work items under the run's sizes: the sizes
	// the plan picks for it, its tasks, buckets, combine level and
	// merge reads.
	Units Units `json:"units"`
	// WorkerPeakBytes is the most memory one worker loop holds for one
	// of the ply's tasks (see workerPeak).
	WorkerPeakBytes        int64            `json:"worker_peak_bytes"`
	Transactions           int64            `json:"transactions"`
	TransactionsByCategory map[string]int64 `json:"transactions_by_category"`
	// StoredBytes is the blob data the ply keeps after the run; written
	// and read are the bytes its work sends to and gets from storage.
	StoredBytes  int64 `json:"stored_bytes"`
	BytesWritten int64 `json:"bytes_written"`
	BytesRead    int64 `json:"bytes_read"`
	// CostUSD prices the transactions, ComputeUSD the CPU seconds (at
	// the plan's VCPUHour), and TotalUSD is the two together: what the
	// ply costs but for keeping its blobs, which StorageUSDPerMonth
	// prices.
	CostUSD            float64 `json:"cost_usd"`
	ComputeUSD         float64 `json:"compute_usd"`
	TotalUSD           float64 `json:"total_usd"`
	StorageUSDPerMonth float64 `json:"storage_usd_per_month"`
	CPUSeconds         float64 `json:"cpu_seconds"`
	// Seconds is the ply's wall time with the plan's workers, all busy.
	Seconds float64 `json:"seconds"`
	// Rates over the ply (at least a second, the unit of the targets).
	RequestsPerSecond float64 `json:"requests_per_second"`
	MessagesPerSecond float64 `json:"queue_messages_per_second"`
	EntitiesPerSecond float64 `json:"table_entities_per_second"`
	IngressPerSecond  float64 `json:"ingress_bytes_per_second"`
	EgressPerSecond   float64 `json:"egress_bytes_per_second"`
	// HotEntitiesPerSecond is what the busiest partition would serve
	// with each kind of row in one partition.
	HotEntitiesPerSecond float64 `json:"hot_partition_entities_per_second"`
	// Accounts, QueueShards and Partitions keep the rates within the
	// limits, Partitions counting every partition the ply's entities
	// are spread over; PartitionShards is the run's setting of that name
	// (pipeline.RunConfig) that keeps the busiest partition within its
	// target. Binding names the limit that needs the most of its unit
	// (CPU when one of each suffices: then the workers set the pace).
	Accounts        int    `json:"accounts"`
	QueueShards     int    `json:"queue_shards"`
	Partitions      int    `json:"table_partitions"`
	PartitionShards int    `json:"partition_shards"`
	Binding         string `json:"binding_limit"`
	// load is the binding limit's rate over what one unit takes.
	load float64
}

// Make plans a run of 8x8 from the usual start to cfg.Target.
func (m *Model) Make(cfg Config) (*Plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("planning: %w", err)
	}
	if cfg.Sizes == (runstore.Sizes{}) {
		cfg.Sizes = pipeline.DefaultRunConfig().Sizes
	}
	if cfg.CPUScale == 0 {
		cfg.CPUScale = 1
	}
	pl := &Plan{Board: 8, TargetPly: cfg.Target, Fitted: m.Fitted, Sizes: cfg.Sizes, CPUPerEdge: m.CPUPerEdge * cfg.CPUScale, CPUPerSegment: m.CPUPerSegment * cfg.CPUScale,
		CPUScale: cfg.CPUScale, EdgeGrowth: m.EdgeGrowth, Limits: cfg.Limits, Prices: cfg.Prices, VCPUHour: cfg.VCPUHour}
	pl.EmbeddedDiskBytes, _ = pipeline.EstimateDisk(pipeline.RunConfig{Config: runstore.Config{Board: 8, Target: cfg.Target, Sizes: cfg.Sizes}})
	edges := make([]int64, cfg.Target+2)
	positions := make([]int64, cfg.Target+2)
	for p := range edges {
		n, extra, err := m.Positions(p)
		if err != nil {
			return nil, err
		}
		positions[p], edges[p] = n, m.Edges(p, n)
		if p <= cfg.Target {
			pl.Plies = append(pl.Plies, Ply{Ply: p, Positions: n, Edges: edges[p], Extrapolated: extra})
		}
	}
	// A worker loop is busy with a ply for its CPU or its calls'
	// latency, whichever is longer: it makes one call at a time.
	latency := cmp.Or(cfg.Latency, DefaultLatency)
	usages := make([]Usage, len(pl.Plies))
	busy := make([]float64, len(pl.Plies))
	var total float64
	for i := range pl.Plies {
		y := &pl.Plies[i]
		usages[i] = m.estimatePly(y, cfg, positions, edges)
		busy[i] = max(y.CPUSeconds, float64(y.Transactions)*latency.Seconds())
		total += busy[i]
	}
	pl.Workers = cfg.Workers
	if cfg.Deadline > 0 {
		pl.DeadlineSeconds = cfg.Deadline.Seconds()
		pl.Workers = max(1, int(math.Ceil(total/pl.DeadlineSeconds)))
	}
	t := &pl.Total
	t.Ply, t.Binding, t.TransactionsByCategory = cfg.Target, BoundCPU, map[string]int64{}
	t.Accounts, t.QueueShards, t.Partitions, t.PartitionShards = 1, 1, 1, 1
	for i := range pl.Plies {
		y := &pl.Plies[i]
		y.Seconds = busy[i] / float64(pl.Workers)
		y.need(usages[i], m.hot[kindAt(y.Ply, cfg.Target)], cfg.Limits)
		t.add(y)
	}
	queues, _ := pl.Shards()
	pl.Polling = pollingOf(pl.Workers, t.Seconds, cmp.Or(cfg.PollMax, pipeline.DefaultWorkerConfig().PollMax), queues, cfg.Prices)
	t.Transactions += pl.Polling.Transactions
	t.TransactionsByCategory[task.CategoryControl] += pl.Polling.Transactions
	t.CostUSD += pl.Polling.CostUSD
	t.TotalUSD += pl.Polling.CostUSD
	return pl, nil
}

// kindAt is what a run to ply last does with ply's positions.
func kindAt(ply, last int) kind {
	if ply == last {
		return target
	}
	return interior
}

// estimatePly fills in a ply's units, transactions, bytes, worker
// memory, CPU and their cost from the model, and returns its usage.
func (m *Model) estimatePly(y *Ply, cfg Config, positions, edges []int64) Usage {
	edgesAt := func(p int) int64 { return edges[p] }
	k := kindAt(y.Ply, cfg.Target)
	var u Usage
	y.TransactionsByCategory = map[string]int64{}
	y.Units = m.unitsAt(cfg.Sizes, y.Ply, cfg.Target, positions, edges)
	y.WorkerPeakBytes = workerPeak(y.Units, positions, edges)
	var stats storage.Stats
	for _, cat := range task.Categories {
		cu := m.lines[k][cat].at(float64(driverOf(edgesAt, k, cat, y.Ply)))
		cu.Ops = m.opsAt(k, cat, y.Units)
		if per, ok := m.entitiesPerUnit[k][cat]; ok {
			cu.Entities = round(per * y.Units.value(entityDriver(cat)))
		}
		if n := cu.Transactions(); n > 0 || cat != task.CategoryCompensation {
			y.TransactionsByCategory[cat] = n
		}
		u = u.Add(cu)
		for op, n := range cu.Ops {
			svc, name, _ := strings.Cut(op, ".")
			stats.Ops = append(stats.Ops, storage.OpStat{Service: svc, Operation: name, Category: cat, Count: n})
		}
	}
	y.Transactions, y.BytesWritten, y.BytesRead = u.Transactions(), u.BytesWritten, u.BytesRead
	y.StoredBytes = round(m.stored.at(float64(y.Positions)))
	c := report.EstimateCost(stats, y.StoredBytes, cfg.Prices)
	y.CostUSD, y.StorageUSDPerMonth = c.TransactionsUSD, c.StorageUSDPerMonth
	y.CPUSeconds = m.CPUPerEdge*float64(handledBy(edgesAt, cfg.Target, y.Ply)) + m.CPUPerSegment*y.Units.Segments
	y.CPUSeconds += m.CPUPerEdge * combinedEdges(y.Units, y.Edges)
	y.CPUSeconds *= cfg.CPUScale
	y.ComputeUSD = y.CPUSeconds / 3600 * cfg.VCPUHour
	y.TotalUSD = y.CostUSD + y.ComputeUSD
	return u
}

// add sums ply y into the total t: counts add up, rates and shards take
// the largest, and the binding limit is the most loaded ply's.
func (t *Ply) add(y *Ply) {
	t.Positions += y.Positions
	t.Edges += y.Edges
	t.Extrapolated = t.Extrapolated || y.Extrapolated
	t.Transactions += y.Transactions
	for c, n := range y.TransactionsByCategory {
		t.TransactionsByCategory[c] += n
	}
	t.StoredBytes += y.StoredBytes
	t.BytesWritten += y.BytesWritten
	t.BytesRead += y.BytesRead
	t.CostUSD += y.CostUSD
	t.ComputeUSD += y.ComputeUSD
	t.TotalUSD += y.TotalUSD
	t.StorageUSDPerMonth += y.StorageUSDPerMonth
	t.CPUSeconds += y.CPUSeconds
	t.Seconds += y.Seconds
	t.RequestsPerSecond = max(t.RequestsPerSecond, y.RequestsPerSecond)
	t.MessagesPerSecond = max(t.MessagesPerSecond, y.MessagesPerSecond)
	t.EntitiesPerSecond = max(t.EntitiesPerSecond, y.EntitiesPerSecond)
	t.IngressPerSecond = max(t.IngressPerSecond, y.IngressPerSecond)
	t.EgressPerSecond = max(t.EgressPerSecond, y.EgressPerSecond)
	t.Accounts, t.QueueShards, t.Partitions = max(t.Accounts, y.Accounts), max(t.QueueShards, y.QueueShards), max(t.Partitions, y.Partitions)
	t.PartitionShards = max(t.PartitionShards, y.PartitionShards)
	t.HotEntitiesPerSecond = max(t.HotEntitiesPerSecond, y.HotEntitiesPerSecond)
	t.WorkerPeakBytes = max(t.WorkerPeakBytes, y.WorkerPeakBytes)
	if y.load > t.load {
		t.load, t.Binding = y.load, y.Binding
	}
}

// need works out a ply's rates and the shards they need. Each count is
//
//	units = ceil(rate / (target * headroom)), at least 1,
//
// where rate is the ply's demand (requests, queue operations, table
// entities, bytes) over the ply's wall time, or over one second if the
// ply is shorter: the targets are per second, so a ply that makes fewer
// requests than a target in all cannot exceed it. Accounts cover the
// largest of requests, ingress and egress; every queue operation
// (enqueue, dequeue, delete, visibility update) counts as a message.
// Rates are the ply's average: the headroom absorbs its unevenness. The
// partition shards cover the busiest partition's rate, hot times the
// ply's entity rate: spreading each kind of row over that many
// partitions divides it among them.
func (y *Ply) need(u Usage, hot float64, l Limits) {
	window := max(y.Seconds, 1)
	var queueOps int64
	for op, n := range u.Ops {
		if strings.HasPrefix(op, storage.ServiceQueue+".") {
			queueOps += n
		}
	}
	y.RequestsPerSecond = float64(u.Transactions()) / window
	y.MessagesPerSecond = float64(queueOps) / window
	y.EntitiesPerSecond = float64(u.Entities) / window
	y.IngressPerSecond = float64(u.BytesWritten) / window
	y.EgressPerSecond = float64(u.BytesRead) / window
	y.HotEntitiesPerSecond = hot * y.EntitiesPerSecond
	loads := []struct {
		name string
		load float64
	}{
		{BoundRequests, y.RequestsPerSecond / (l.AccountRequests * l.Headroom)},
		{BoundIngress, y.IngressPerSecond / (l.AccountIngress * l.Headroom)},
		{BoundEgress, y.EgressPerSecond / (l.AccountEgress * l.Headroom)},
		{BoundQueue, y.MessagesPerSecond / (l.QueueMessages * l.Headroom)},
		{BoundPartitions, y.EntitiesPerSecond / (l.PartitionEntities * l.Headroom)},
	}
	units := func(load float64) int { return max(1, int(math.Ceil(load))) }
	y.Accounts = units(max(loads[0].load, loads[1].load, loads[2].load))
	y.QueueShards = units(loads[3].load)
	y.Partitions = units(loads[4].load)
	y.PartitionShards = units(y.HotEntitiesPerSecond / (l.PartitionEntities * l.Headroom))
	y.Binding, y.load = BoundCPU, 1
	for _, x := range loads {
		if x.load > y.load {
			y.Binding, y.load = x.name, x.load
		}
	}
}

// Shards is the run settings that keep the whole run within the limits:
// the most work-queue shards and partition shards any ply needs (see
// need for the formula), within the pipeline's bounds.
func (p *Plan) Shards() (queues, partitions int) {
	return min(p.Total.QueueShards, pipeline.MaxQueueShards), min(p.Total.PartitionShards, pipeline.MaxPartitionShards)
}

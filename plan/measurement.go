package plan

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Measurement is what one real run of the pipeline cost, ply by ply: the
// input the model is fitted to. plan/internal/measure writes it.
type Measurement struct {
	// Date, Machine and Command say when, where and how it was measured.
	Date    string `json:"date"`
	Machine string `json:"machine"`
	Command string `json:"command"`
	Board   int    `json:"board"`
	Target  int    `json:"target_ply"`
	Workers int    `json:"workers"`
	// BlobPositions and BucketBlobs are the run's settings, which the
	// storage figures depend on.
	BlobPositions int `json:"blob_positions"`
	BucketBlobs   int `json:"bucket_blobs"`
	// GrowFrom and MergeFanIn are the rest of the run's size rules
	// (runstore.Sizes); 0 in runs measured before they existed.
	GrowFrom   int `json:"grow_from,omitempty"`
	MergeFanIn int `json:"merge_fan_in,omitempty"`
	// WallSeconds and CPUSeconds are the whole run's: CPU is user plus
	// system time of the process, which also ran the embedded storage.
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	// YardstickNs is the CPU nanoseconds an edge of the yardstick run
	// took on the machine (MeasureYardstick), timed right after the run:
	// what a plan scales the CPU to another machine by (Calibration).
	YardstickNs float64 `json:"yardstick_cpu_ns_per_edge"`
	// Plies has one entry per ply, in order.
	Plies []MeasuredPly `json:"plies"`
	// NoPly is the storage work done for no ply's message: polling an
	// empty queue, seeding, checking whether the run is done, reading
	// the report. It depends on the time workers wait, not on the work.
	NoPly Usage `json:"no_ply"`
}

// MeasuredPly is one ply of a Measurement.
type MeasuredPly struct {
	Ply       int   `json:"ply"`
	Positions int64 `json:"positions"`
	Edges     int64 `json:"edges"`
	// StoredBytes is the blob data of the ply kept at the end of the run
	// (final blobs, results): what the run is billed per month for.
	StoredBytes int64 `json:"stored_bytes"`
	// Categories is the storage work done handling the ply's messages,
	// by the run report's categories (enumeration, dedup, backtrack,
	// control, compensation).
	Categories map[string]Usage `json:"categories"`
	// HottestPartition is the most table entities one partition served
	// for the ply's messages, and Partitions how many partitions served
	// any.
	HottestPartition int64 `json:"hottest_partition_entities"`
	Partitions       int   `json:"partitions"`
	// Finals, Buckets, Combines and Segments are the ply's final blobs,
	// bucket merges, combine tasks and segments read by both merge
	// steps; 0 in runs measured before they were recorded.
	Finals   int64 `json:"finals,omitempty"`
	Buckets  int64 `json:"buckets,omitempty"`
	Combines int64 `json:"combines,omitempty"`
	Segments int64 `json:"segments,omitempty"`
}

// Usage is storage work: billed transactions by operation, named as
// storage.Operation.String does ("blob.get"), and what they moved.
type Usage struct {
	Ops map[string]int64 `json:"ops"`
	// BytesWritten is the payload sent to the account (ingress),
	// BytesRead what came back (egress): blob data and message texts.
	BytesWritten int64 `json:"bytes_written"`
	BytesRead    int64 `json:"bytes_read"`
	// Entities counts the table entities read or written, the unit of
	// the partition target: one per single-entity call, one per entity
	// of a query page (at least one) or of a batch.
	Entities int64 `json:"entities"`
}

// Transactions is the number of billed transactions.
func (u Usage) Transactions() int64 {
	var n int64
	for _, c := range u.Ops {
		n += c
	}
	return n
}

// Add returns u and v together.
func (u Usage) Add(v Usage) Usage {
	out := Usage{Ops: maps.Clone(u.Ops), BytesWritten: u.BytesWritten + v.BytesWritten, BytesRead: u.BytesRead + v.BytesRead, Entities: u.Entities + v.Entities}
	if out.Ops == nil {
		out.Ops = map[string]int64{}
	}
	for op, n := range v.Ops {
		out.Ops[op] += n
	}
	return out
}

// ParseMeasurement reads a Measurement and checks that it can be fitted:
// consecutive plies from 0 and a target that is the last of them.
func ParseMeasurement(data []byte) (Measurement, error) {
	var m Measurement
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("reading a measurement: %w", err)
	}
	if len(m.Plies) == 0 || m.Target != len(m.Plies)-1 {
		return m, fmt.Errorf("measurement of target ply %d has %d plies, want plies 0 to %d", m.Target, len(m.Plies), m.Target)
	}
	for i, p := range m.Plies {
		if p.Ply != i || p.Positions < 0 || p.Edges < 0 || p.StoredBytes < 0 {
			return m, fmt.Errorf("measurement ply entry %d: ply %d, %d positions, %d edges, %d bytes stored", i, p.Ply, p.Positions, p.Edges, p.StoredBytes)
		}
	}
	if m.CPUSeconds <= 0 || m.Workers < 1 || m.BlobPositions < 1 || m.BucketBlobs < 1 {
		return m, fmt.Errorf("measurement of target ply %d: %g CPU seconds, %d workers, %d blob positions, %d bucket blobs", m.Target, m.CPUSeconds, m.Workers, m.BlobPositions, m.BucketBlobs)
	}
	return m, nil
}

// Package metrics exposes a worker's figures to Prometheus: messages
// handled by kind and outcome, task durations, positions, edges, merges
// and poisoned messages, and the storage transactions and bytes the
// metered backend counted. It has its own registry, so nothing leaks into
// (or from) the global default one.
//
// Counters that already exist elsewhere (pipeline.Progress, the
// storage.Metered counts) are read at scrape time rather than copied, so
// there is one source of truth for each figure.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
)

// Namespace prefixes every metric name.
const Namespace = "reversi"

// DurationBuckets are the task duration histogram's upper bounds in
// seconds: 5 ms to about 5.5 minutes by factors of 4, since tasks range
// from a tiny scan to a merge of many large runs.
var DurationBuckets = prometheus.ExponentialBuckets(0.005, 4, 9)

// Sources are the counters read at scrape time. Either may be nil.
type Sources struct {
	// Storage is the metered backend the worker uses.
	Storage *storage.Metered
	// Progress is shared by every worker loop of the process.
	Progress *pipeline.Progress
}

// Metrics is one process's registry. It implements pipeline.Observer.
type Metrics struct {
	reg      *prometheus.Registry
	handled  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

var _ pipeline.Observer = (*Metrics)(nil)

// New makes a registry with the worker's metrics, the storage collector,
// and the standard Go runtime and process collectors.
func New(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "messages_handled_total",
			Help:      "Work messages handled, by message kind and outcome (ok, failed, poison, lease_lost, cancelled, throttled).",
		}, []string{"kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace,
			Name:      "task_duration_seconds",
			Help:      "Time spent handling one work message, by message kind, whatever the outcome.",
			Buckets:   DurationBuckets,
		}, []string{"kind"}),
	}
	m.reg.MustRegister(m.handled, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if p := src.Progress; p != nil {
		counter := func(name, help string, read func() int64) prometheus.CounterFunc {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help},
				func() float64 { return float64(read()) })
		}
		m.reg.MustRegister(
			counter("positions_expanded_total", "Positions expanded (their moves generated) by this process.", p.Positions.Load),
			counter("edges_total", "Edges (parent-child moves) found by this process.", p.Edges.Load),
			counter("merges_total", "Merges of sorted runs done by this process.", p.Merges.Load),
			counter("poison_messages_total", "Messages this process moved to the poison queue.", p.Poisoned.Load),
		)
	}
	if src.Storage != nil {
		m.reg.MustRegister(NewStorageCollector(src.Storage.Stats))
	}
	return m
}

// TaskDone counts one handled message and its duration.
func (m *Metrics) TaskDone(kind, outcome string, d time.Duration) {
	m.handled.WithLabelValues(kind, outcome).Inc()
	m.duration.WithLabelValues(kind).Observe(d.Seconds())
}

// Registry is the registry itself, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// StorageCollector reports a metered backend's counts, read at scrape
// time from Stats.
type StorageCollector struct {
	stats   func() storage.Stats
	txs     *prometheus.Desc
	written *prometheus.Desc
	read    *prometheus.Desc
}

// NewStorageCollector collects from stats, usually (*storage.Metered).Stats.
func NewStorageCollector(stats func() storage.Stats) *StorageCollector {
	return &StorageCollector{
		stats: stats,
		txs: prometheus.NewDesc(Namespace+"_storage_transactions_total",
			"Billed storage transactions, by service (blob, queue, table), operation and category (what the caller was doing; other if unlabelled).",
			[]string{"service", "operation", "category"}, nil),
		written: prometheus.NewDesc(Namespace+"_storage_written_bytes_total",
			"Bytes sent to storage: blob data, message text and entity properties.", nil, nil),
		read: prometheus.NewDesc(Namespace+"_storage_read_bytes_total",
			"Bytes received from storage: blob data, message text and entity properties.", nil, nil),
	}
}

// Describe sends the descriptors of the storage metrics.
func (c *StorageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.txs
	ch <- c.written
	ch <- c.read
}

// Collect takes one Stats snapshot and sends it as counters.
func (c *StorageCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	// Stats has one row per (service, operation, category); "" and an
	// explicit "other" would both be "other", so sum rather than emit twice.
	type key struct{ service, op, cat string }
	sums := map[key]int64{}
	var order []key
	for _, o := range s.Ops {
		k := key{o.Service, o.Operation, o.Category}
		if k.cat == "" {
			k.cat = "other"
		}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += o.Count
	}
	for _, k := range order {
		ch <- prometheus.MustNewConstMetric(c.txs, prometheus.CounterValue, float64(sums[k]), k.service, k.op, k.cat)
	}
	ch <- prometheus.MustNewConstMetric(c.written, prometheus.CounterValue, float64(s.BytesWritten))
	ch <- prometheus.MustNewConstMetric(c.read, prometheus.CounterValue, float64(s.BytesRead))
}

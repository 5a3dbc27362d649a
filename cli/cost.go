package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// costFlags are the prices of the cost estimate.
type costFlags struct {
	p        report.Prices
	vcpuHour float64  // the price of the CPU's seconds
	names    []string // the flags of the prices in p
	set      []string // those given on the command line
}

func (c *costFlags) register(fs *flag.FlagSet) {
	c.p = report.DefaultPrices
	defaults := fmt.Sprintf("; the default is Azure's list price for general-purpose v2 hot LRS storage in East US as of %s", report.PricesDate)
	for _, f := range []struct {
		v          *float64
		name, what string
	}{
		{&c.p.BlobWrite, "price-blob-write", "10,000 blob write operations (Put Blob, Put Block, Put Block List)"},
		{&c.p.BlobList, "price-blob-list", "10,000 blob list and create-container operations"},
		{&c.p.BlobRead, "price-blob-read", "10,000 blob read operations (Get Blob)"},
		{&c.p.BlobOther, "price-blob-other", "10,000 other blob operations (deletes are free)"},
		{&c.p.QueueClass1, "price-queue-class1", "10,000 queue class 1 operations (Put Message, Update Message, Create Queue)"},
		{&c.p.QueueClass2, "price-queue-class2", "10,000 queue class 2 operations (Get, Peek and Delete Message, queue metadata, Delete Queue)"},
		{&c.p.Table, "price-table", "10,000 table transactions (an entity group transaction is one)"},
		{&c.p.BlobGBMonth, "price-gb-month", "GB-month of blob data stored (GB = 2^30 bytes)"},
	} {
		fs.Float64Var(f.v, f.name, *f.v, "cost report: USD per "+f.what+defaults)
		c.names = append(c.names, f.name)
	}
	fs.Float64Var(&c.vcpuHour, "price-vcpu-hour", report.DefaultVCPUHour, "cost report and -plan: USD per vCPU hour, the price of the CPU seconds; the default is "+report.VCPUHourSource+", over its 2 vCPUs")
}

// validate checks every price flag given after parsing, -price-vcpu-hour
// too, and notes which of p's were given.
func (c *costFlags) validate(fs *flag.FlagSet) error {
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "price-") {
			return
		}
		if slices.Contains(c.names, f.Name) {
			c.set = append(c.set, "-"+f.Name)
		}
		if v := f.Value.(flag.Getter).Get().(float64); (v < 0 || v != v) && bad == nil {
			bad = usagef("-%s %v: a price must be zero or more", f.Name, v)
		}
	})
	if len(c.set) > 0 {
		c.p.Source = "prices from " + strings.Join(c.set, ", ") + "; the rest: " + report.PricesSource
	}
	return bad
}

// apply adds the transactions of stats (every process's) by category
// and by service and their cost estimate to rep, counting the blob data
// the run's container holds now, and what handling each ply's messages
// cost; and the processes' CPU time and the processor time they held,
// at the vCPU hour's price, unless none was recorded (runs of releases
// before it).
func (c *costFlags) apply(ctx context.Context, rep *report.Report, be storage.Backend, run string, all runstore.WorkerStats) error {
	stats := all.Storage
	rep.SetTransactions(byCategory(stats))
	rep.SetHandlings(stats.Plies)
	blobs, err := be.Container(pipeline.Container(run)).List(ctx, "")
	if err != nil {
		return fmt.Errorf("listing the run's blobs for the cost report: %w", err)
	}
	var stored int64
	for _, b := range blobs {
		stored += b.Size
	}
	cost := report.EstimateCost(stats, stored, c.p)
	if all.CPU > 0 {
		cost.SetCompute(all.CPU, all.Held, c.vcpuHour)
	}
	rep.SetCost(cost)
	return nil
}

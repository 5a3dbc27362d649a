package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// PricesDate is when the default prices were Azure's list prices.
const PricesDate = "2024-06"

// PricesSource names the default prices.
const PricesSource = "Azure list prices, general-purpose v2 storage, hot tier, LRS, East US, USD, as of " + PricesDate

// Prices are storage prices in US dollars: per 10,000 transactions of
// each class, and per GB-month (GB = 2^30 bytes, as Azure bills) of blob
// data. The classes are Azure's: blob operations are write, list (list
// and create container), read, other, or free (deletes); queue operations
// are class 1 (create queue, put and update message) or class 2 (get,
// peek and delete message, queue metadata, delete queue); table
// transactions have one price, an entity group transaction being one.
type Prices struct {
	Source      string  `json:"source"`
	BlobWrite   float64 `json:"blob_write_per_10k"`
	BlobList    float64 `json:"blob_list_per_10k"`
	BlobRead    float64 `json:"blob_read_per_10k"`
	BlobOther   float64 `json:"blob_other_per_10k"`
	QueueClass1 float64 `json:"queue_class1_per_10k"`
	QueueClass2 float64 `json:"queue_class2_per_10k"`
	Table       float64 `json:"table_per_10k"`
	BlobGBMonth float64 `json:"blob_per_gb_month"`
}

// DefaultPrices are Azure's list prices for general-purpose v2 storage,
// hot tier, locally redundant, in East US, as of PricesDate, from
// azure.microsoft.com/pricing/details/storage/ (blobs, queues, tables).
// Prices change and differ by region: pass the current ones as flags.
var DefaultPrices = Prices{
	Source:      PricesSource,
	BlobWrite:   0.05,
	BlobList:    0.05,
	BlobRead:    0.004,
	BlobOther:   0.004,
	QueueClass1: 0.004,
	QueueClass2: 0.004,
	Table:       0.00036,
	BlobGBMonth: 0.018,
}

// Price classes.
const (
	ClassWrite  = "write"
	ClassList   = "list"
	ClassRead   = "read"
	ClassOther  = "other"
	ClassFree   = "free"
	ClassClass1 = "class1"
	ClassClass2 = "class2"
	ClassTable  = "all"
)

// priceClass maps each operation that storage.Metered counts to Azure's
// price class. Operations not listed fall back to the dearest class of
// their service, so a new operation is never priced too low.
var priceClass = map[[2]string]string{
	{storage.ServiceBlob, "put_new"}:             ClassWrite, // Put Blob with If-None-Match
	{storage.ServiceBlob, "put"}:                 ClassWrite,
	{storage.ServiceBlob, "upload"}:              ClassWrite,
	{storage.ServiceBlob, "put_block"}:           ClassWrite,
	{storage.ServiceBlob, "put_block_list"}:      ClassWrite,
	{storage.ServiceBlob, "create"}:              ClassList, // Create Container
	{storage.ServiceBlob, "list"}:                ClassList,
	{storage.ServiceBlob, "get"}:                 ClassRead,
	{storage.ServiceBlob, "open"}:                ClassRead, // Get Blob with a range
	{storage.ServiceBlob, "delete"}:              ClassFree,
	{storage.ServiceBlob, "drop"}:                ClassFree, // Delete Container
	{storage.ServiceQueue, "create"}:             ClassClass1,
	{storage.ServiceQueue, "enqueue"}:            ClassClass1,
	{storage.ServiceQueue, "update_visibility"}:  ClassClass1,
	{storage.ServiceQueue, "dequeue"}:            ClassClass2,
	{storage.ServiceQueue, "delete"}:             ClassClass2,
	{storage.ServiceQueue, "drop"}:               ClassClass2,
	{storage.ServiceQueue, "approximate_length"}: ClassClass2,
	{storage.ServiceQueue, "peek"}:               ClassClass2,
}

// PriceClass returns the price class of a service's operation.
func PriceClass(service, op string) string {
	if c, ok := priceClass[[2]string{service, op}]; ok {
		return c
	}
	switch service {
	case storage.ServiceBlob:
		return ClassWrite
	case storage.ServiceQueue:
		return ClassClass1
	}
	return ClassTable
}

// per10k returns the price of a class.
func (p Prices) per10k(service, class string) float64 {
	switch service + "/" + class {
	case "blob/write":
		return p.BlobWrite
	case "blob/list":
		return p.BlobList
	case "blob/read":
		return p.BlobRead
	case "blob/other":
		return p.BlobOther
	case "queue/class1":
		return p.QueueClass1
	case "queue/class2":
		return p.QueueClass2
	case "table/all":
		return p.Table
	}
	return 0 // free
}

// usd is the price of n transactions of a service's operation.
func (p Prices) usd(service, op string, n int64) float64 {
	return float64(n) * p.per10k(service, PriceClass(service, op)) / 10000
}

// Cost is the estimated storage bill of a run.
type Cost struct {
	Prices Prices `json:"prices"`
	// Transactions by service (blob, queue, table), then category.
	Transactions map[string]map[string]int64 `json:"transactions"`
	// Lines price the transactions per service and class.
	Lines           []CostLine `json:"lines"`
	TransactionsUSD float64    `json:"transactions_usd"`
	// Plies splits the transactions and their cost by the ply of the
	// message being handled, in ply order; NoPly is the rest: polling
	// the queue, settling messages, seeding, reading the run.
	Plies []PlyCost `json:"plies,omitempty"`
	NoPly PlyCost   `json:"no_ply"`
	// StoredBytes is the blob data the run keeps; StorageUSDPerMonth what
	// keeping it costs per month.
	StoredBytes        int64   `json:"stored_bytes"`
	StorageUSDPerMonth float64 `json:"storage_usd_per_month"`
	// Compute is the CPU time of the processes that worked on the run,
	// priced (SetCompute); nil if none was recorded. TotalUSD is the
	// transactions and the compute together.
	Compute  *Compute `json:"compute,omitempty"`
	TotalUSD float64  `json:"total_usd"`
}

// DefaultVCPUHour is Azure's list price of a general-purpose vCPU for an
// hour, in US dollars: a Standard_D2s_v5 (2 vCPUs, 8 GiB) running Linux
// pay-as-you-go in East US costs $0.096 an hour, as of June 2026 (read
// 2026-11-28 from https://c3x.dev/blog/azure-vm-types-compared, which
// quotes East US's pay-as-you-go Linux prices; Azure's own table is
// https://azure.microsoft.com/pricing/details/virtual-machines/linux/).
// Prices change and differ by region, size and commitment: the commands
// take the current one as -price-vcpu-hour.
const DefaultVCPUHour = 0.096 / 2

// VCPUHourSource names DefaultVCPUHour.
const VCPUHourSource = "Azure's list price of a Standard_D2s_v5 (2 vCPUs), Linux, pay-as-you-go, East US, June 2026: $0.096 an hour"

// Compute is the CPU time of a run's processes and its price. USD
// prices the CPU seconds used, which TotalUSD adds to the transactions;
// HeldUSD the processor time the processes held, busy or idle, which is
// what machines or containers that ran only them are billed for: a
// fleet idle at a stage's tail costs that, not what it used.
type Compute struct {
	// CPUSeconds is the user and system time of every process that worked
	// on the run, as each last recorded it (a process killed before it
	// recorded its last seconds is counted to then); HeldSeconds each
	// one's wall time times its processors (0 from releases before it).
	CPUSeconds  float64 `json:"cpu_seconds"`
	HeldSeconds float64 `json:"held_seconds,omitempty"`
	VCPUHour    float64 `json:"vcpu_hour_usd"`
	USD         float64 `json:"usd"`
	HeldUSD     float64 `json:"held_usd,omitempty"`
}

// SetCompute prices cpu and held at vcpuHour dollars a vCPU hour, and
// sets the total, which counts the CPU time used.
func (c *Cost) SetCompute(cpu, held time.Duration, vcpuHour float64) {
	c.Compute = &Compute{CPUSeconds: cpu.Seconds(), HeldSeconds: held.Seconds(), VCPUHour: vcpuHour,
		USD: cpu.Hours() * vcpuHour, HeldUSD: held.Hours() * vcpuHour}
	c.TotalUSD = c.TransactionsUSD + c.Compute.USD
}

// CostLine is the cost of one service's transactions of one class.
type CostLine struct {
	Service      string  `json:"service"`
	Class        string  `json:"class"`
	Transactions int64   `json:"transactions"`
	PricePer10k  float64 `json:"price_per_10k"`
	USD          float64 `json:"usd"`
}

// PlyCost is the transactions made for one ply and their cost.
type PlyCost struct {
	Ply          int     `json:"ply"` // -1 for NoPly
	Transactions int64   `json:"transactions"`
	USD          float64 `json:"usd"`
}

// bytesPerGB is Azure's billing gigabyte.
const bytesPerGB = 1 << 30

// EstimateCost prices the transactions in s and storedBytes of blob data.
// Calls without a category are counted under "other".
func EstimateCost(s storage.Stats, storedBytes int64, p Prices) *Cost {
	c := &Cost{Prices: p, Transactions: map[string]map[string]int64{}, StoredBytes: storedBytes}
	type key struct{ service, class string }
	lines := map[key]int64{}
	for _, o := range s.Ops {
		cat := o.Category
		if cat == "" {
			cat = "other"
		}
		if c.Transactions[o.Service] == nil {
			c.Transactions[o.Service] = map[string]int64{}
		}
		c.Transactions[o.Service][cat] += o.Count
		lines[key{o.Service, PriceClass(o.Service, o.Operation)}] += o.Count
		c.NoPly.USD += p.usd(o.Service, o.Operation, o.Count)
	}
	c.NoPly.Ply, c.NoPly.Transactions = -1, s.Unattributed()
	for _, ps := range s.Plies {
		pc := PlyCost{Ply: ps.Ply}
		for name, n := range ps.Ops {
			svc, op, _ := strings.Cut(name, ".")
			pc.Transactions += n
			pc.USD += p.usd(svc, op, n)
		}
		c.Plies = append(c.Plies, pc)
		c.NoPly.USD -= pc.USD
	}
	// What the plies leave of the whole, up to rounding.
	c.NoPly.USD = max(0, c.NoPly.USD)
	for k, n := range lines {
		price := p.per10k(k.service, k.class)
		l := CostLine{Service: k.service, Class: k.class, Transactions: n, PricePer10k: price, USD: float64(n) * price / 10000}
		c.Lines = append(c.Lines, l)
		c.TransactionsUSD += l.USD
	}
	slices.SortFunc(c.Lines, func(a, b CostLine) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Class, b.Class))
	})
	c.StorageUSDPerMonth = float64(storedBytes) / bytesPerGB * p.BlobGBMonth
	c.TotalUSD = c.TransactionsUSD
	return c
}

// ByService sums the transactions of each service.
func (c *Cost) ByService() map[string]int64 {
	m := map[string]int64{}
	for svc, cats := range c.Transactions {
		for _, n := range cats {
			m[svc] += n
		}
	}
	return m
}

// WriteTable prints the transactions by category and service, the
// priced lines, and the totals.
func (c *Cost) WriteTable(w io.Writer) error {
	services := []string{storage.ServiceBlob, storage.ServiceQueue, storage.ServiceTable}
	var cats []string
	for _, m := range c.Transactions {
		for cat := range m {
			if !slices.Contains(cats, cat) {
				cats = append(cats, cat)
			}
		}
	}
	slices.Sort(cats)
	fmt.Fprintln(w, "\nstorage transactions by category and service:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "category\tblob\tqueue\ttable\ttotal\t\n")
	row := func(name string, get func(svc string) int64) {
		var total int64
		fmt.Fprintf(tw, "%s\t", name)
		for _, svc := range services {
			n := get(svc)
			total += n
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintf(tw, "%d\t\n", total)
	}
	for _, cat := range cats {
		row(cat, func(svc string) int64 { return c.Transactions[svc][cat] })
	}
	bySvc := c.ByService()
	row("total", func(svc string) int64 { return bySvc[svc] })
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nestimated cost (%s):\n", c.Prices.Source)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "service\tclass\ttransactions\tUSD per 10,000\tUSD\t\n")
	for _, l := range c.Lines {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.5f\t%.8f\t\n", l.Service, l.Class, l.Transactions, l.PricePer10k, l.USD)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "transactions: $%.8f; blob data stored: %d bytes, $%.8f per month at $%g per GB-month\n",
		c.TransactionsUSD, c.StoredBytes, c.StorageUSDPerMonth, c.Prices.BlobGBMonth); err != nil {
		return err
	}
	if u := c.Compute; u != nil {
		if _, err := fmt.Fprintf(w, "compute: %.1f CPU seconds (the processes' user and system time), $%.8f at $%g a vCPU hour; transactions and compute: $%.8f\n",
			u.CPUSeconds, u.USD, u.VCPUHour, c.TotalUSD); err != nil {
			return err
		}
		if u.HeldSeconds > 0 {
			if _, err := fmt.Fprintf(w, "processors held: %.1f vCPU seconds (each process's wall time times its processors, busy or idle), $%.8f at that price; transactions and processors held: $%.8f\n",
				u.HeldSeconds, u.HeldUSD, c.TransactionsUSD+u.HeldUSD); err != nil {
				return err
			}
		}
	}
	if len(c.Plies) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nstorage transactions by ply (of the message handled):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ply\ttransactions\tUSD\t\n")
	for _, p := range append(c.Plies, c.NoPly) {
		name := fmt.Sprint(p.Ply)
		if p.Ply < 0 {
			name = "none"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.8f\t\n", name, p.Transactions, p.USD)
	}
	return tw.Flush()
}

package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

func TestEstimateCost(t *testing.T) {
	// Prices that are exact in binary, so every product is exact too.
	p := Prices{Source: "test", BlobWrite: 0.5, BlobList: 0.25, BlobRead: 0.125, BlobOther: 1,
		QueueClass1: 2, QueueClass2: 0.0625, Table: 4, BlobGBMonth: 0.5}
	op := func(svc, name, cat string, n int64) storage.OpStat {
		return storage.OpStat{Service: svc, Operation: name, Category: cat, Count: n}
	}
	for _, tc := range []struct {
		name      string
		ops       []storage.OpStat
		stored    int64
		lines     []CostLine
		usd       float64
		perMonth  float64
		byService map[string]int64
	}{
		{name: "nothing", lines: nil, byService: map[string]int64{}},
		{
			name: "every class",
			ops: []storage.OpStat{
				op("blob", "put", "dedup", 10000), op("blob", "put_block", "", 5000), op("blob", "put_block_list", "", 5000),
				op("blob", "list", "", 40000), op("blob", "create", "", 1),
				op("blob", "get", "dedup", 80000), op("blob", "open", "enumeration", 80000),
				op("blob", "delete", "dedup", 123456), op("blob", "drop", "", 1),
				op("queue", "enqueue", "", 15000), op("queue", "update_visibility", "", 5000),
				op("queue", "dequeue", "", 160000), op("queue", "delete", "", 160000),
				op("table", "transact", "dedup", 2500), op("table", "query", "control", 2500),
			},
			stored: 3 << 30,
			lines: []CostLine{
				{"blob", "free", 123457, 0, 0},
				{"blob", "list", 40001, 0.25, 1.000025},
				{"blob", "read", 160000, 0.125, 2},
				{"blob", "write", 20000, 0.5, 1},
				{"queue", "class1", 20000, 2, 4},
				{"queue", "class2", 320000, 0.0625, 2},
				{"table", "all", 5000, 4, 2},
			},
			usd:       1.000025 + 2 + 1 + 4 + 2 + 2,
			perMonth:  1.5,
			byService: map[string]int64{"blob": 343458, "queue": 340000, "table": 5000},
		},
		{
			name:      "an operation with no class is priced at the dearest of its service",
			ops:       []storage.OpStat{op("blob", "teleport", "", 10000), op("queue", "teleport", "", 10000), op("table", "teleport", "", 10000)},
			lines:     []CostLine{{"blob", "write", 10000, 0.5, 0.5}, {"queue", "class1", 10000, 2, 2}, {"table", "all", 10000, 4, 4}},
			usd:       6.5,
			byService: map[string]int64{"blob": 10000, "queue": 10000, "table": 10000},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := EstimateCost(storage.Stats{Ops: tc.ops}, tc.stored, p)
			if len(c.Lines) != len(tc.lines) {
				t.Fatalf("lines %+v, want %+v", c.Lines, tc.lines)
			}
			for i, l := range c.Lines {
				w := tc.lines[i]
				if l.Service != w.Service || l.Class != w.Class || l.Transactions != w.Transactions || l.PricePer10k != w.PricePer10k || !near(l.USD, w.USD) {
					t.Errorf("line %d: %+v, want %+v", i, l, w)
				}
			}
			if !near(c.TransactionsUSD, tc.usd) || c.StorageUSDPerMonth != tc.perMonth || c.StoredBytes != tc.stored {
				t.Errorf("USD %v per month %v stored %d; want %v, %v, %d", c.TransactionsUSD, c.StorageUSDPerMonth, c.StoredBytes, tc.usd, tc.perMonth, tc.stored)
			}
			got := c.ByService()
			if len(got) != len(tc.byService) {
				t.Errorf("by service %v, want %v", got, tc.byService)
			}
			for k, v := range tc.byService {
				if got[k] != v {
					t.Errorf("by service %v, want %v", got, tc.byService)
				}
			}
		})
	}
}

// near allows for the rounding of a decimal result such as 1.000025.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestEveryMeteredOperationHasAClass lists the operations storage.Metered
// names (storage/metered.go) so a renamed one shows up here.
func TestEveryMeteredOperationHasAClass(t *testing.T) {
	ops := map[string][]string{
		storage.ServiceQueue: {"create", "drop", "enqueue", "dequeue", "update_visibility", "delete", "approximate_length", "peek"},
		storage.ServiceBlob:  {"create", "drop", "put_new", "put", "upload", "put_block", "put_block_list", "get", "open", "delete", "list"},
	}
	for svc, names := range ops {
		for _, name := range names {
			if _, ok := priceClass[[2]string{svc, name}]; !ok {
				t.Errorf("%s %s has no price class", svc, name)
			}
		}
	}
}

func TestCostTable(t *testing.T) {
	r := &Report{Board: 4, Plies: []Ply{{}}, Cost: EstimateCost(storage.Stats{Ops: []storage.OpStat{
		{Service: "blob", Operation: "put", Category: "dedup", Count: 3},
		{Service: "table", Operation: "get", Count: 4},
	}}, 1<<30, DefaultPrices)}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"category  blob  queue  table  total", "dedup     3      0      0      3", "other     0      0      4      4",
		"total     3      0      4      7", "as of " + PricesDate, "blob  write             3         0.05000  0.00001500", "table    all             4         0.00036  0.00000014", "transactions: $0.00001514", "1073741824 bytes, $0.01800000 per month"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestCostByPly prices each ply's transactions and the rest, and puts
// them in the plies' rows.
func TestCostByPly(t *testing.T) {
	p := Prices{Source: "test", BlobWrite: 0.5, BlobRead: 0.125, QueueClass1: 2, QueueClass2: 0.0625, Table: 4}
	s := storage.Stats{
		Ops: []storage.OpStat{
			{Service: "blob", Operation: "put", Category: "enumeration", Count: 20000},
			{Service: "blob", Operation: "get", Category: "dedup", Count: 80000},
			{Service: "blob", Operation: "delete", Category: "dedup", Count: 7},
			{Service: "queue", Operation: "dequeue", Category: "control", Count: 160000},
			{Service: "table", Operation: "get", Category: "control", Count: 10000},
		},
		Plies: []storage.PlyStat{
			{Ply: 0, Ops: map[string]int64{"blob.put": 10000, "table.get": 5000}},
			{Ply: 1, Ops: map[string]int64{"blob.put": 10000, "blob.get": 80000, "blob.delete": 7}},
			{Ply: 2, Ops: map[string]int64{"table.get": 5000}}, // in progress: no row yet
		},
	}
	c := EstimateCost(s, 0, p)
	want := []PlyCost{{0, 15000, 0.5 + 2}, {1, 90007, 1.5}, {2, 5000, 2}}
	if len(c.Plies) != len(want) {
		t.Fatalf("plies %+v, want %+v", c.Plies, want)
	}
	for i, w := range want {
		if g := c.Plies[i]; g.Ply != w.Ply || g.Transactions != w.Transactions || !near(g.USD, w.USD) {
			t.Errorf("ply %d: %+v, want %+v", i, g, w)
		}
	}
	if c.NoPly.Ply != -1 || c.NoPly.Transactions != 160000 || !near(c.NoPly.USD, 1) || !near(c.TransactionsUSD, 0.5+2+1.5+2+1) {
		t.Errorf("no ply %+v, total $%v; want the 160,000 dequeues at $1 of $7", c.NoPly, c.TransactionsUSD)
	}
	r := &Report{Plies: []Ply{{Ply: 0}, {Ply: 1}}}
	r.SetCost(c)
	if r.Plies[0].Transactions != 15000 || !near(r.Plies[0].CostUSD, 2.5) || r.Plies[1].Transactions != 90007 || r.TransactionsByService["blob"] != 100007 {
		t.Errorf("rows %+v, by service %v", r.Plies, r.TransactionsByService)
	}
	var b bytes.Buffer
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"storage transactions by ply", "   1         90007  1.50000000", "none        160000  1.00000000"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

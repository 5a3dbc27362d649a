package cli

import (
	"encoding/json"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/internal/cputime"
	"github.com/reversi-cloud/reversi/report"
)

// TestEnumerateCostReport checks the cost section of a real pipeline run:
// it prices every counted transaction once, at the class prices given,
// and its CPU time and the processor time it held at the vCPU hour's,
// and both the table and the JSON carry it.
func TestEnumerateCostReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rep.json")
	before := cputime.Process()
	code, out, stderr := runCmd(t, Enumerate, "-board", "4", "-plies", "7", "-quiet", "-workers", "2", "-blob-positions", "100", "-json", path, "-price-table", "1.5", "-price-vcpu-hour", "2.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"storage transactions by category and service:", "estimated cost (prices from -price-table; the rest: Azure list prices",
		"as of " + report.PricesDate, "table     all", "1.50000", "transactions: $", "blob data stored: ", "CPU seconds (the processes' user and system time), $", "at $2.5 a vCPU hour; transactions and compute: $",
		"vCPU seconds (each process's wall time times its processors, busy or idle), $"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	rep := readReport(t, path)
	c := rep.Cost
	if c == nil {
		t.Fatal("JSON report has no cost")
	}
	var bySvc, byLine int64
	for _, n := range rep.TransactionsByService {
		bySvc += n
	}
	var usd float64
	prices := map[string]float64{"blob/write": 0.05, "blob/list": 0.05, "blob/read": 0.004, "blob/other": 0.004, "blob/free": 0,
		"queue/class1": 0.004, "queue/class2": 0.004, "table/all": 1.5}
	for _, l := range c.Lines {
		byLine += l.Transactions
		usd += l.USD
		if want, ok := prices[l.Service+"/"+l.Class]; !ok || l.PricePer10k != want || l.USD != float64(l.Transactions)*want/10000 {
			t.Errorf("line %+v: want price %v and USD = transactions x price / 10,000", l, want)
		}
	}
	if bySvc != rep.StorageTransactions || byLine != rep.StorageTransactions || rep.StorageTransactions == 0 {
		t.Errorf("transactions: %d by service, %d priced, %d in all", bySvc, byLine, rep.StorageTransactions)
	}
	if math.Abs(usd-c.TransactionsUSD) > 1e-12 || c.StoredBytes <= 0 || c.StorageUSDPerMonth != float64(c.StoredBytes)/(1<<30)*0.018 {
		t.Errorf("cost %+v: lines sum to %v", c, usd)
	}
	if c.Prices.Table != 1.5 || c.Prices.BlobWrite != report.DefaultPrices.BlobWrite {
		t.Errorf("prices %+v", c.Prices)
	}
	// The run's CPU is this test process's, which ran it: some, and no
	// more than the process used meanwhile.
	u := c.Compute
	if u == nil {
		t.Fatal("JSON report has no compute")
	}
	if used := (cputime.Process() - before).Seconds(); u.CPUSeconds <= 0 || u.CPUSeconds > cputime.Process().Seconds() || used <= 0 {
		t.Errorf("the run's CPU: %g s; the process used %g s while it ran", u.CPUSeconds, used)
	}
	if want := u.CPUSeconds / 3600 * 2.5; u.VCPUHour != 2.5 || math.Abs(u.USD-want) > 1e-12 || math.Abs(c.TotalUSD-c.TransactionsUSD-u.USD) > 1e-12 {
		t.Errorf("compute %+v: want $%g at $2.5 an hour; total $%g with $%g of transactions", u, want, c.TotalUSD, c.TransactionsUSD)
	}
	// The time held is this test process's too, from its start.
	if held := cputime.Held().Seconds(); u.HeldSeconds <= 0 || u.HeldSeconds > held || math.Abs(u.HeldUSD-u.HeldSeconds/3600*2.5) > 1e-12 {
		t.Errorf("compute %+v: held %g s, $%g; the process has held %g s", u, u.HeldSeconds, u.HeldUSD, held)
	}
}

func TestCostAndMetricsFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		cmd  func(Env) int
		args []string
		code int
		want string
	}{
		{"negative price", Enumerate, []string{"-price-table", "-1"}, ExitUsage, "-price-table -1"},
		{"not a price", Inspect, []string{"-run", "abc", "-price-gb-month", "cheap"}, ExitUsage, "-price-gb-month"},
		{"metrics address", Worker, []string{"-run", "abc", "-metrics-addr", "9090"}, ExitUsage, "-metrics-addr \"9090\""},
		{"metrics port taken", Worker, []string{"-run", "abc", "-data", t.TempDir(), "-metrics-addr", busy.Addr().String()}, ExitFail, "-metrics-addr " + busy.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.cmd, tc.args...)
			if code != tc.code || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		cmd  func(Env) int
		want []string
	}{
		{Worker, []string{"-metrics-addr", "/metrics"}},
		{Inspect, []string{"-price-blob-write", "-price-queue-class2", "-price-table", "-price-gb-month", report.PricesDate, "East US"}},
		{Enumerate, []string{"-price-blob-read", report.PricesDate}},
	} {
		_, out, _ := runCmd(t, tc.cmd, "-h")
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("-h lacks %q:\n%s", w, out)
			}
		}
	}
}

// readReport reads a JSON report a command wrote.
func readReport(t *testing.T, path string) report.Report {
	t.Helper()
	var rep report.Report
	readJSON(t, path, &rep)
	return rep
}

// readJSON decodes the JSON file a command wrote into out.
func readJSON(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

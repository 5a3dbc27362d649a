package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/browse"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
)

// noEnv is an empty process environment.
func noEnv(string) string { return "" }

// serving runs cmd in the environment getenv until it prints a line
// with ready followed by a URL on standard error, and returns the URL
// and a function that interrupts the command as Ctrl-C does and returns
// its exit code, output and errors.
func serving(t *testing.T, getenv func(string) string, cmd func(Env) int, ready string, args ...string) (string, func() (int, string, string)) {
	t.Helper()
	var out, errOut testkit.Buffer
	done := make(chan int, 1)
	go func() { done <- cmd(Env{Args: args, Getenv: getenv, Stdout: &out, Stderr: &errOut}) }()
	line := regexp.MustCompile(regexp.QuoteMeta(ready) + `.*(http://127\.0\.0\.1:\d+/)`)
	var url string
	deadline := time.After(time.Minute)
	for url == "" {
		select {
		case code := <-done:
			t.Fatalf("%v: exit %d before serving:\n%s%s", args, code, out.String(), errOut.String())
		case <-deadline:
			t.Fatalf("%v: no line %q with an address in a minute:\n%s", args, ready, errOut.String())
		case <-time.After(10 * time.Millisecond):
			if m := line.FindStringSubmatch(errOut.String()); m != nil {
				url = m[1]
			}
		}
	}
	return url, func() (int, string, string) {
		t.Helper()
		// The command has its signal handler installed: it printed the URL.
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			return code, out.String(), errOut.String()
		case <-time.After(time.Minute):
			t.Fatalf("%v: still running a minute after SIGINT", args)
			return 0, "", ""
		}
	}
}

// getBody answers GET url with its status and body.
func getBody(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, b
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	code, b := getBody(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", url, code, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// checkPlyCosts checks that every ply of rep has transactions and a
// cost, and that with those made for no ply they add up to the run's.
func checkPlyCosts(t *testing.T, what string, rep *report.Report) {
	t.Helper()
	if rep.Cost == nil {
		t.Fatalf("%s: no cost", what)
	}
	sum, usd := rep.Cost.NoPly.Transactions, rep.Cost.NoPly.USD
	for _, p := range rep.Plies {
		if p.Transactions == 0 || p.CostUSD <= 0 {
			t.Errorf("%s: ply %d has %d transactions costing $%v", what, p.Ply, p.Transactions, p.CostUSD)
		}
		sum, usd = sum+p.Transactions, usd+p.CostUSD
	}
	if sum != rep.StorageTransactions || math.Abs(usd-rep.Cost.TransactionsUSD) > 1e-9 {
		t.Errorf("%s: the plies and the rest make %d transactions costing $%v; the run %d, $%v", what, sum, usd, rep.StorageTransactions, rep.Cost.TransactionsUSD)
	}
}

var transactionsLine = regexp.MustCompile(`storage transactions: (\d+)`)

// TestEnumerateAndInspectServeTheRun: enumerate -http keeps serving its
// finished run until Ctrl-C, and inspect -http serves it later from the
// same -data; both report what enumerate printed.
func TestEnumerateAndInspectServeTheRun(t *testing.T) {
	dir := t.TempDir()
	jsonOut := filepath.Join(dir, "four.json")
	url, stop := serving(t, noEnv, Enumerate, "the run is over; still serving it at", "-board", "4", "-quiet", "-data", dir, "-run", "four", "-json", jsonOut, "-http", "127.0.0.1:0")
	var progress browse.Progress
	getJSON(t, url+"api/progress", &progress)
	var live report.Report
	getJSON(t, url+"api/report", &live)
	if !progress.Live || !progress.Finished || progress.Tasks == 0 || progress.Edges != live.Edges() || progress.Ply < 0 || progress.Ply > live.TargetPly {
		t.Errorf("progress after the run: %+v; want live, finished, the run's %d edges and the ply of its last task", progress, live.Edges())
	}
	code, out, errOut := stop()
	if code != 0 || !strings.Contains(errOut, "enumerate: browse the run at "+url) {
		t.Fatalf("enumerate: exit %d:\n%s%s", code, out, errOut)
	}
	printed := readReport(t, jsonOut)
	if d := report.Diff(&printed, &live); d != "" || !live.Complete || live.StorageTransactions != printed.StorageTransactions || live.Cost == nil {
		t.Errorf("served report: %s; complete %v, %d transactions, want %d", d, live.Complete, live.StorageTransactions, printed.StorageTransactions)
	}

	url, stop = serving(t, noEnv, Inspect, "inspect: serving run four at", "-storage", "embedded", "-data", dir, "-run", "four", "-http", "127.0.0.1:0")
	var later report.Report
	getJSON(t, url+"api/report", &later)
	var pos browse.Position
	getJSON(t, url+"api/position?moves=b1", &pos)
	getJSON(t, url+"api/progress", &progress)
	if code, out, errOut := stop(); code != 0 {
		t.Fatalf("inspect: exit %d:\n%s%s", code, out, errOut)
	}
	if d := report.Diff(&printed, &later); d != "" || later.StorageTransactions != printed.StorageTransactions {
		t.Errorf("inspect's report: %s; %d transactions, want %d", d, later.StorageTransactions, printed.StorageTransactions)
	}
	checkPlyCosts(t, "enumerate -json", &printed)
	checkPlyCosts(t, "inspect -http", &later)
	for i, p := range later.Plies {
		if p.Transactions != printed.Plies[i].Transactions {
			t.Errorf("ply %d: inspect serves %d transactions, enumerate printed %d", p.Ply, p.Transactions, printed.Plies[i].Transactions)
		}
	}
	if pos.Result != "white" || pos.Score == nil || *pos.Score != [2]int{3, 11} {
		t.Errorf("after b1: %+v", pos)
	}
	if progress.Live {
		t.Errorf("inspect's progress is live: %+v", progress)
	}

	// inspect -json writes a position as the page reads it.
	posOut := filepath.Join(dir, "b1.json")
	if code, _, errOut := runCmd(t, Inspect, "-storage", "embedded", "-data", dir, "-run", "four", "-moves", "b1", "-json", posOut); code != 0 {
		t.Fatalf("inspect -moves b1: exit %d: %s", code, errOut)
	}
	var written browse.Position
	readJSON(t, posOut, &written)
	if !reflect.DeepEqual(written, pos) {
		t.Errorf("inspect -moves b1 -json wrote %+v, the server answered %+v", written, pos)
	}
}

// TestInspectServesAnAzureRunWithoutSecrets serves a run on Azurite and
// checks that no page, answer or error holds the account key or the
// connection string, and that the served report is inspect's.
func TestInspectServesAnAzureRunWithoutSecrets(t *testing.T) {
	cs := azuretest.Config(t).ConnectionString
	key := accountKey(t, cs)
	run := fmt.Sprintf("web%d", time.Now().UnixNano()%1e9)
	jsonOut := filepath.Join(t.TempDir(), "r.json")
	for _, step := range []struct {
		cmd  func(Env) int
		args []string
	}{
		{Seed, []string{"-run", run, "-board", "4", "-plies", "5"}},
		{Worker, []string{"-run", run, "-exit-when-done"}},
		{Inspect, []string{"-run", run, "-json", jsonOut}},
	} {
		if code, out := secretRun(step.cmd, cs, step.args...); code != 0 {
			t.Fatalf("%v: exit %d:\n%s", step.args, code, out)
		}
	}
	getenv := func(k string) string {
		if k == azure.EnvConnectionString {
			return cs
		}
		return ""
	}
	url, stop := serving(t, getenv, Inspect, "inspect: serving run", "-run", run, "-http", "127.0.0.1:0")
	var served report.Report
	getJSON(t, url+"api/report", &served)
	for _, path := range []string{"", "app.js", "api/report", "api/progress", "api/position?moves=b1", "api/position?moves=b1a1a2c4a3d1", "api/position?key=nonsense"} {
		_, body := getBody(t, url+path)
		noSecrets(t, "GET /"+path, string(body), cs, key)
	}
	code, out, errOut := stop()
	if code != 0 {
		t.Fatalf("inspect -http: exit %d:\n%s%s", code, out, errOut)
	}
	noSecrets(t, "inspect -http output", out+errOut, cs, key)
	printed := readReport(t, jsonOut)
	if d := report.Diff(&printed, &served); d != "" || served.StorageTransactions < printed.StorageTransactions || served.Cost == nil {
		t.Errorf("served report: %s; %d transactions, inspect printed %d", d, served.StorageTransactions, printed.StorageTransactions)
	}
	checkPlyCosts(t, "inspect -http of an Azure run", &served)
}

// TestInspectServesAStartRun serves a run seeded with -start: the board
// viewer's start is that position, at ply 0, and the report names it.
func TestInspectServesAStartRun(t *testing.T) {
	dir := t.TempDir()
	b := board.MustNew(4)
	start, err := b.ParseMoves("b1a1")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd(t, Enumerate, "-board", "4", "-start", "OX---OX--XO----- X", "-quiet", "-data", dir, "-run", "fromb1a1"); code != 0 {
		t.Fatalf("enumerate -start: exit %d:\n%s%s", code, out, errOut)
	}
	url, stop := serving(t, noEnv, Inspect, "inspect: serving run fromb1a1 at", "-storage", "embedded", "-data", dir, "-run", "fromb1a1", "-http", "127.0.0.1:0")
	var rep report.Report
	getJSON(t, url+"api/report", &rep)
	var pos, child browse.Position
	getJSON(t, url+"api/position", &pos)
	getJSON(t, url+"api/position?moves=a2", &child)
	if code, out, errOut := stop(); code != 0 {
		t.Fatalf("inspect: exit %d:\n%s%s", code, out, errOut)
	}
	if pos.Key != start.Text() || pos.Ply != 0 || len(pos.Parents) != 0 || pos.Result != "white" {
		t.Errorf("start: %+v, want %s at ply 0 without parents, won by white", pos, start.Text())
	}
	if child.Ply != 1 || !slices.Equal(child.Parents, []string{b.Canonical(start).Text()}) {
		t.Errorf("after a2 from the start: %+v", child)
	}
	if rep.Start != start.Text() || rep.TargetPly != 10 || len(rep.Plies) != 11 {
		t.Errorf("report: start %q, target ply %d, %d plies", rep.Start, rep.TargetPly, len(rep.Plies))
	}
	checkPlyCosts(t, "inspect -http of a -start run", &rep)
}

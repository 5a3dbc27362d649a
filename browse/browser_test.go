package browse

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/task"
)

// serve serves h on addr until the test ends and returns its URL.
func serve(t *testing.T, h *Server, addr string) string {
	t.Helper()
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return URL(l)
}

// commas formats n as the page does (en-US grouping).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// usd formats a cost as the page does.
func usd(v float64) string { return fmt.Sprintf("$%.6f", v) }

func tableRow(p report.Ply) []string {
	row := []string{strconv.Itoa(p.Ply)}
	for _, n := range []int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws, p.Unknown, p.Blobs, p.Merges, p.BlobReads,
		p.Tasks, p.EntityReads, p.MaxTaskTransactions, p.MaxTaskEntities} {
		row = append(row, commas(n))
	}
	return append(row, strconv.FormatFloat(p.MaxTaskSeconds, 'f', 3, 64), commas(p.Transactions), usd(p.CostUSD))
}

func key(t *testing.T, b *board.Board, moves string) string {
	t.Helper()
	p, err := b.ParseMoves(moves)
	if err != nil {
		t.Fatal(err)
	}
	return p.Text()
}

// viewerShows is the page's state once it has drawn the position key.
func viewerShows(key string) string {
	return fmt.Sprintf(`document.querySelector("#viewer").dataset.key === %q`, key)
}

// TestBrowser opens the served 4x4 run in headless Chromium: the table
// holds the report's counts, the start board its legal moves, a click
// on a move shows the child, the browser's back and forward buttons walk
// the positions seen, a position's address opens it, and the form opens
// positions by moves and by key.
func TestBrowser(t *testing.T) {
	c := startChrome(t)
	r := run4x4(t)
	b := r.Board
	base := serve(t, newServer(t, Config{Source: r, Origin: message.StandardOrigin(b)}), "127.0.0.1:0")
	rep, err := r.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	start := b.Start().Text()
	c.navigate(base)
	c.waitFor(fmt.Sprintf(`document.querySelector("#plies").dataset.loaded === "%d" && %s`, len(rep.Plies), viewerShows(start)))
	var rows [][]string
	c.eval(`[...document.querySelectorAll("#ply-table tbody tr")].map(tr => [...tr.cells].map(td => td.textContent))`, &rows)
	if len(rows) != len(rep.Plies) {
		t.Fatalf("%d rows in the table, want %d", len(rows), len(rep.Plies))
	}
	for i, p := range rep.Plies {
		if want := tableRow(p); !slices.Equal(rows[i], want) || p.Transactions == 0 {
			t.Errorf("table row %d: %q, want %q with transactions", i, rows[i], want)
		}
	}
	// The handlings by kind: a row for each kind of each ply, in ply
	// order and kinds by name, with the report's figures.
	var kindRows, wantKinds [][]string
	c.eval(`[...document.querySelectorAll("#kind-table tbody tr")].map(tr => [...tr.cells].map(td => td.textContent))`, &kindRows)
	for _, p := range rep.Plies {
		kinds := slices.Sorted(maps.Keys(p.ByKind))
		for _, k := range kinds {
			s := p.ByKind[k]
			wantKinds = append(wantKinds, []string{strconv.Itoa(p.Ply), k, commas(s.Handlings), commas(s.Transactions), commas(s.EntityReads),
				commas(s.MaxTransactions), commas(s.MaxEntities)})
		}
	}
	if len(wantKinds) == 0 || !slices.EqualFunc(kindRows, wantKinds, slices.Equal) {
		t.Errorf("handlings by kind: %q, want %q (not empty)", kindRows, wantKinds)
	}
	// Below the plies: the transactions made for no ply, then the totals.
	var foot [][]string
	c.eval(`[...document.querySelectorAll("#ply-table tfoot tr")].map(tr => [...tr.cells].slice(-2).map(td => td.textContent))`, &foot)
	wantFoot := [][]string{
		{commas(rep.Cost.NoPly.Transactions), usd(rep.Cost.NoPly.USD)},
		{commas(rep.StorageTransactions), usd(rep.Cost.TransactionsUSD)},
	}
	if !slices.EqualFunc(foot, wantFoot, slices.Equal) {
		t.Errorf("transactions and cost below the table: %q, want %q", foot, wantFoot)
	}
	var summary string
	c.eval(`document.querySelector("#summary").textContent`, &summary)
	if want := "target ply 12, complete, root: white, perfect play 3-11 (black-white)"; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	for _, series := range []string{"positions", "transactions", "cost"} {
		var points int
		c.eval(`document.querySelectorAll("#charts svg g[data-series=`+series+`] circle").length`, &points)
		if points != len(rep.Plies) {
			t.Errorf("the %s chart has %d points, want %d", series, points, len(rep.Plies))
		}
	}

	var moves, want []string
	c.eval(`[...document.querySelectorAll("#board a.move")].map(a => a.dataset.move).sort()`, &moves)
	for m := b.Moves(b.Start()); m != 0; m &= m - 1 {
		want = append(want, b.SquareName(bits.TrailingZeros64(m)))
	}
	if slices.Sort(want); len(want) != 4 || !slices.Equal(moves, want) {
		t.Errorf("start board moves %v, want the legal %v", moves, want)
	}

	// A click on b1 shows the child, with its result and its children's.
	c.click(`#board a.move[data-move="b1"]`)
	c.waitFor(viewerShows(key(t, b, "b1")))
	var shown struct {
		Hash     string
		Result   string
		Children [][]string
	}
	showing := `({hash: location.hash, result: document.querySelector('[data-fact="result"]').textContent,
		children: [...document.querySelectorAll("#children tbody tr")].map(tr => [...tr.cells].slice(0, 3).map(td => td.textContent))})`
	c.eval(showing, &shown)
	wantChildren := [][]string{{"a1", "white", "3-11"}, {"c1", "black", "9-1"}, {"a3", "black", "11-2"}}
	if shown.Hash != "#/moves/b1" || shown.Result != "white 3-11" || !slices.EqualFunc(shown.Children, wantChildren, slices.Equal) {
		t.Errorf("after clicking b1: %+v, want #/moves/b1, white 3-11 and children %v", shown, wantChildren)
	}
	c.click(`#children a[href="#/moves/b1a1"]`)
	c.waitFor(viewerShows(key(t, b, "b1a1")))

	// Back and forward.
	c.eval(`history.back()`, nil)
	c.waitFor(viewerShows(key(t, b, "b1")))
	c.eval(`history.back()`, nil)
	c.waitFor(viewerShows(start))
	c.eval(`history.forward()`, nil)
	c.waitFor(viewerShows(key(t, b, "b1")))

	// A position's address opens it in a fresh page.
	deep := key(t, b, "b1a1a2")
	c.navigate("about:blank")
	c.navigate(base + "#/pos/" + deep)
	c.waitFor(viewerShows(deep))
	info, err := r.Lookup(context.Background(), mustParse(t, b, deep))
	if err != nil {
		t.Fatal(err)
	}
	c.eval(showing, &shown)
	if want := fmt.Sprintf("%s %d-%d", info.Result, info.Score.Black, info.Score.White); shown.Result != want || len(shown.Children) != len(info.Children) {
		t.Errorf("%s: result %q and %d children, want %q and %d", deep, shown.Result, len(shown.Children), want, len(info.Children))
	}
	// Its children's links keep to keys in its orientation.
	c.click(`#board a.move`)
	var hash string
	c.waitFor(`location.hash.startsWith("#/pos/") && location.hash !== "#/pos/` + deep + `" && document.querySelector("#viewer").dataset.key === location.hash.slice(6)`)

	// The form opens moves and keys.
	c.eval(`document.querySelector("#goto-input").value = "B1 c1"; document.querySelector("#goto button").click()`, nil)
	c.waitFor(viewerShows(key(t, b, "b1c1")))
	c.eval(`location.hash`, &hash)
	if hash != "#/moves/b1c1" {
		t.Errorf("the form went to %q, want #/moves/b1c1", hash)
	}
	c.eval(fmt.Sprintf(`document.querySelector("#goto-input").value = %q; document.querySelector("#goto button").click()`, deep), nil)
	c.waitFor(viewerShows(deep))

	// Moves that are not legal say so.
	c.navigate(base + "#/moves/a1")
	c.waitFor(`document.querySelector("#position-error").textContent.includes("flips nothing")`)
}

func mustParse(t *testing.T, b *board.Board, key string) board.Position {
	t.Helper()
	p, err := b.ParseText(key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBrowserLiveProgress shows a live run's progress, refreshing by
// itself until the worker loops finish, and the transactions of a ply
// being worked on before its counts.
func TestBrowserLiveProgress(t *testing.T) {
	c := startChrome(t)
	rep := &report.Report{Board: 8, TargetPly: 5, Root: "unknown", StorageTransactions: 120,
		Plies: []report.Ply{{Ply: 0, Positions: 1, Unknown: 1, Transactions: 30, CostUSD: 0.5}, {Ply: 1, Positions: 1, Edges: 4, Unknown: 1, Transactions: 50, CostUSD: 0.25}},
		Cost: &report.Cost{TransactionsUSD: 1, NoPly: report.PlyCost{Ply: -1, Transactions: 30, USD: 0.125},
			Plies: []report.PlyCost{{Ply: 0, Transactions: 30, USD: 0.5}, {Ply: 1, Transactions: 50, USD: 0.25}, {Ply: 2, Transactions: 10, USD: 0.125}}}}
	p := &pipeline.Progress{}
	p.Tasks.Store(5)
	s := newServer(t, Config{Source: &fakeSource{rep: rep}, Origin: message.StandardOrigin(board.MustNew(8)), Progress: p, Started: time.Now(), Poll: 50 * time.Millisecond})
	c.navigate(serve(t, s, "127.0.0.1:0"))
	c.waitFor(`document.querySelector("#plies").dataset.loaded === "2"`)
	var rows [][]string
	c.eval(`[...document.querySelectorAll("#ply-table tr")].slice(1).map(tr => [tr.className, tr.cells[0].textContent, tr.cells[1].textContent, ...[...tr.cells].slice(-2).map(td => td.textContent)])`, &rows)
	want := [][]string{
		{"", "0", "1", "30", "$0.500000"},
		{"", "1", "1", "50", "$0.250000"},
		{"in-progress", "2", "–", "10", "$0.125000"},
		{"no-ply", "no ply", "", "30", "$0.125000"},
		{"all", "all", "2", "120", "$1.000000"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("table of a live run: %q, want %q", rows, want)
	}
	c.waitFor(`!document.querySelector("#progress").hidden && document.querySelector("#progress").dataset.tasks === "5"`)
	p.Tasks.Store(9)
	p.Add(1234, 5000)
	p.Started(message.Message{Kind: message.KindResolve, Ply: 11})
	at := time.Now()
	p.SetStep(task.Step{Ply: 11, Name: "resolving", Done: 10, Total: 100, At: at})
	p.SetStep(task.Step{Ply: 11, Name: "resolving", Done: 40, Total: 100, At: at.Add(61 * time.Second)}) // 60 blobs left at 2.03 s each
	c.waitFor(`document.querySelector("#progress").dataset.tasks === "9" && document.querySelector('#progress [data-field="positions"]').textContent === "1,234"
		&& document.querySelector('#progress [data-field="ply"]').textContent === "11"
		&& document.querySelector('#progress [data-field="current"]').textContent === "resolving ply 11"
		&& document.querySelector('#progress [data-field="step"]').textContent === "ply 11: 40/100 final blobs resolved"
		&& document.querySelector('#progress [data-field="step_eta_seconds"]').textContent === "2m 02s"`)
	s.Finish()
	c.waitFor(`document.querySelector("#progress").classList.contains("finished") && document.querySelector('#progress [data-field="current"]').textContent === "finished"`)
}

// TestBrowserFromAStart opens a run seeded after b1a1 (as with -start):
// the page opens on that position, at ply 0, with its legal moves.
func TestBrowserFromAStart(t *testing.T) {
	c := startChrome(t)
	r, o := runFrom4x4(t, "b1a1")
	c.navigate(serve(t, newServer(t, Config{Source: r, Origin: o}), "127.0.0.1:0"))
	// The viewer and the report load apart: wait for both, as TestBrowser
	// does, before reading the summary the report fills in.
	c.waitFor(`document.querySelector("#plies").dataset.loaded !== undefined && ` + viewerShows(o.Start.Text()))
	var shown struct {
		Ply     string
		Moves   []string
		Summary string
	}
	c.eval(`({ply: document.querySelector('[data-fact="ply"]').textContent,
		moves: [...document.querySelectorAll("#board a.move")].map(a => a.dataset.move).sort(),
		summary: document.querySelector("#summary").textContent})`, &shown)
	var want []string
	for m := o.Board.Moves(o.Start); m != 0; m &= m - 1 {
		want = append(want, o.Board.SquareName(bits.TrailingZeros64(m)))
	}
	slices.Sort(want)
	if shown.Ply != "0" || !slices.Equal(shown.Moves, want) || !strings.HasSuffix(shown.Summary, "from the start position "+o.Start.Text()) {
		t.Errorf("start page: %+v; want ply 0, moves %v and the start in the summary", shown, want)
	}
	c.click(`#board a.move[data-move="` + want[0] + `"]`)
	c.waitFor(`location.hash === "#/moves/` + want[0] + `" && document.querySelector('[data-fact="ply"]').textContent === "1"`)
}

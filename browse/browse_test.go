package browse

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// pricedRun is a run whose reports carry the cost of the transactions
// its worker loops made, and what handling each ply's messages cost, as
// the command line's reports do.
type pricedRun struct {
	*pipeline.Run
	stats storage.Stats
}

func (r pricedRun) Report(ctx context.Context) (*report.Report, error) {
	rep, err := r.Run.Report(ctx)
	if err != nil {
		return nil, err
	}
	rep.SetTransactions(r.stats.ByCategory())
	rep.SetCost(report.EstimateCost(r.stats, 0, report.DefaultPrices))
	rep.SetHandlings(r.stats.Plies)
	return rep, nil
}

// run4x4 enumerates the whole 4x4 game on the embedded backend and opens
// the run: every ply resolved, every score known.
func run4x4(t testing.TB) pricedRun {
	t.Helper()
	be := teststore.Embedded(t)
	ctx := context.Background()
	cfg := pipeline.RunConfig{Name: "four", Config: runstore.Config{Board: 4, Target: pipeline.DefaultTarget(4)}}.WithDefaults()
	wcfg := pipeline.WorkerConfig{Visibility: 5 * time.Second, PollMax: 20 * time.Millisecond}
	if _, err := pipeline.RunLocal(ctx, be, cfg, 2, wcfg, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	stats := be.Stats()
	r, err := pipeline.OpenRun(ctx, be, "four")
	if err != nil {
		t.Fatal(err)
	}
	return pricedRun{r, stats}
}

// runFrom4x4 enumerates the 4x4 game to its end from the position after
// moves, on the embedded backend: a run seeded as with -start. It returns
// the run and its origin.
func runFrom4x4(t testing.TB, moves string) (*pipeline.Run, message.Origin) {
	t.Helper()
	b := board.MustNew(4)
	start, err := b.ParseMoves(moves)
	if err != nil {
		t.Fatal(err)
	}
	be := teststore.Embedded(t)
	ctx := context.Background()
	o := message.Origin{Board: b, Start: start}
	cfg := pipeline.RunConfig{Name: "fromhere", Config: runstore.Config{Board: 4, Start: start, Target: o.LastPly()}}.WithDefaults()
	wcfg := pipeline.WorkerConfig{Visibility: 5 * time.Second, PollMax: 20 * time.Millisecond}
	if _, err := pipeline.RunLocal(ctx, be, cfg, 2, wcfg, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	r, err := pipeline.OpenRun(ctx, be, cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	return r, o
}

func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// get asks h for target and decodes the JSON answer into out.
func get(t *testing.T, h http.Handler, target string, out any) int {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: content type %q", target, ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
		t.Fatalf("GET %s: %v in %q", target, err, w.Body.String())
	}
	return w.Code
}

// TestPositionOfARealRun asks for README's example position of the 4x4
// game, by moves and by key, and follows a child and a parent.
func TestPositionOfARealRun(t *testing.T) {
	r := run4x4(t)
	s := newServer(t, Config{Source: r, Origin: message.StandardOrigin(r.Board)})
	var byMoves Position
	if code := get(t, s, "/api/position?moves=b1", &byMoves); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if byMoves.Key != "w00000000000606020000000000040000" || byMoves.Ply != 1 || byMoves.Side != "white" {
		t.Errorf("after b1: key %s ply %d side %s", byMoves.Key, byMoves.Ply, byMoves.Side)
	}
	if want := []string{".X..", ".XX.", ".XO.", "...."}; !slices.Equal(byMoves.Rows, want) {
		t.Errorf("rows %q, want %q", byMoves.Rows, want)
	}
	if byMoves.Result != "white" || byMoves.Score == nil || *byMoves.Score != [2]int{3, 11} || !slices.Equal(byMoves.BestMoves, []string{"a1"}) {
		t.Errorf("result %s score %v best %v, want white 3-11 best a1", byMoves.Result, byMoves.Score, byMoves.BestMoves)
	}
	if !slices.Equal(byMoves.Parents, []string{"b00000000000606000000000000020400"}) || byMoves.ParentsUndone {
		t.Errorf("parents %v (undone %v), want the start's, from the backtracking rows", byMoves.Parents, byMoves.ParentsUndone)
	}
	want := []struct {
		move, canonical, result string
		score                   [2]int
	}{
		{"a1", "b00000000000606030000000000040201", "white", [2]int{3, 11}},
		{"c1", "b00000000000606060000000000020202", "black", [2]int{9, 1}},
		{"a3", "b00000000000607040000000000040404", "black", [2]int{11, 2}},
	}
	if len(byMoves.Children) != len(want) {
		t.Fatalf("children %+v", byMoves.Children)
	}
	for i, w := range want {
		c := byMoves.Children[i]
		if c.Moves[0] != w.move || c.Canonical != w.canonical || c.Result != w.result || !c.InRun || c.Score == nil || *c.Score != w.score {
			t.Errorf("child %d: %+v, want %+v", i, c, w)
		}
		var child Position
		if code := get(t, s, "/api/position?key="+c.Key, &child); code != http.StatusOK || child.Canonical != w.canonical || child.Result != w.result {
			t.Errorf("child %s by key %s: status %d, %+v", w.move, c.Key, code, child)
		}
		var viaMoves Position
		get(t, s, "/api/position?moves=b1"+w.move, &viaMoves)
		if viaMoves.Key != c.Key {
			t.Errorf("b1%s is %s, the child's key says %s", w.move, viaMoves.Key, c.Key)
		}
	}
	var byKey Position
	if code := get(t, s, "/api/position?key="+url.QueryEscape(" "+byMoves.Key+" "), &byKey); code != http.StatusOK || byKey.Key != byMoves.Key || byKey.Result != "white" {
		t.Errorf("by key: status %d, %+v", code, byKey)
	}
	var start Position
	if get(t, s, "/api/position", &start); start.Ply != 0 || len(start.Parents) != 0 || start.Result != "white" {
		t.Errorf("start: %+v", start)
	}
	var moves []string
	for _, c := range start.Children {
		moves = append(moves, c.Moves...)
	}
	if slices.Sort(moves); !slices.Equal(moves, []string{"a2", "b1", "c4", "d3"}) {
		t.Errorf("start moves %v", moves)
	}
}

// TestParentsAtTheLastPly serves a 4x4 run stopped at ply 2, which keeps
// no backtracking rows for its positions (the game goes on past each): a
// ply-2 position's parents come from undoing a move, and a ply-1
// position's from the rows.
func TestParentsAtTheLastPly(t *testing.T) {
	be := teststore.Embedded(t)
	ctx := context.Background()
	cfg := pipeline.RunConfig{Name: "two", Config: runstore.Config{Board: 4, Target: 2}}.WithDefaults()
	wcfg := pipeline.WorkerConfig{Visibility: 5 * time.Second, PollMax: 20 * time.Millisecond}
	if _, err := pipeline.RunLocal(ctx, be, cfg, 1, wcfg, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	r, err := pipeline.OpenRun(ctx, be, "two")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, Config{Source: r, Origin: message.StandardOrigin(r.Board)})
	for _, tc := range []struct {
		moves  string
		undone bool
	}{{"b1", false}, {"b1a1", true}} {
		var p Position
		if code := get(t, s, "/api/position?moves="+tc.moves, &p); code != http.StatusOK {
			t.Fatalf("%s: status %d", tc.moves, code)
		}
		var parent Position
		get(t, s, "/api/position?moves="+tc.moves[:len(tc.moves)-2], &parent)
		if !slices.Equal(p.Parents, []string{parent.Canonical}) || p.ParentsUndone != tc.undone {
			t.Errorf("%s: parents %v (undone %v), want [%s] (undone %v)", tc.moves, p.Parents, p.ParentsUndone, parent.Canonical, tc.undone)
		}
	}
}

// TestPositionOfARunWithAStart serves a run seeded after b1a1 of the 4x4
// game: the start position is b1a1's, at ply 0 with no parents, moves are
// played from it, and plies count from it.
func TestPositionOfARunWithAStart(t *testing.T) {
	r, o := runFrom4x4(t, "b1a1")
	s := newServer(t, Config{Source: r, Origin: o})
	var start Position
	if code := get(t, s, "/api/position", &start); code != http.StatusOK {
		t.Fatalf("status %d: %+v", code, start)
	}
	if start.Key != o.Start.Text() || start.Ply != 0 || len(start.Parents) != 0 || start.Result != "white" || start.Score == nil || *start.Score != [2]int{3, 11} {
		t.Errorf("start: %+v, want %s at ply 0 without parents, white 3-11 (as after b1a1 from the usual start)", start, o.Start.Text())
	}
	var moves []string
	for _, c := range start.Children {
		moves = append(moves, c.Moves...)
	}
	var want []string
	for m := o.Board.Moves(o.Start); m != 0; m &= m - 1 {
		want = append(want, o.Board.SquareName(bits.TrailingZeros64(m)))
	}
	slices.Sort(want)
	if slices.Sort(moves); !slices.Equal(moves, want) {
		t.Errorf("start moves %v, want %v", moves, want)
	}
	var child Position
	if code := get(t, s, "/api/position?moves="+want[0], &child); code != http.StatusOK || child.Ply != 1 || !slices.Equal(child.Parents, []string{o.Board.Canonical(o.Start).Text()}) {
		t.Errorf("after %s: status %d, %+v; want ply 1 with the start as parent", want[0], code, child)
	}
	var e errorOut
	if code := get(t, s, "/api/position?moves=b1", &e); code != http.StatusBadRequest || !strings.Contains(e.Error, "from the run's start") {
		t.Errorf("b1 from the run's start: status %d, %+v", code, e)
	}
	var before Position
	if code := get(t, s, "/api/position?key="+o.Board.Start().Text(), &before); code != http.StatusNotFound || before.Ply != -2 {
		t.Errorf("the board's usual start: status %d, ply %d; want 404 at ply -2", code, before.Ply)
	}
}

// fakeSource answers with fixed values, to reach the error paths.
type fakeSource struct {
	rep       *report.Report
	err       error
	lookupErr error
}

func (f *fakeSource) Report(context.Context) (*report.Report, error) { return f.rep, f.err }

func (f *fakeSource) Lookup(_ context.Context, p board.Position) (*pipeline.PositionInfo, error) {
	if f.lookupErr != nil {
		return nil, f.lookupErr
	}
	return &pipeline.PositionInfo{Position: p, Canonical: p, Ply: p.Discs() - 4}, nil
}

func TestEndpoints(t *testing.T) {
	b := board.MustNew(8)
	rep := &report.Report{Board: 8, TargetPly: 1, Root: "unknown", Plies: []report.Ply{{Ply: 0, Positions: 1, Unknown: 1}, {Ply: 1, Positions: 1, Edges: 4, Unknown: 1}}}
	notIn := &fakeSource{rep: rep, lookupErr: pipeline.ErrNotInRun}
	broken := &fakeSource{err: errors.New("table gone"), lookupErr: errors.New("blob gone")}
	for _, tc := range []struct {
		name   string
		src    Source
		method string
		target string
		status int
		want   string // in the body
	}{
		{"report", &fakeSource{rep: rep}, "GET", "/api/report", 200, `"plies":[{"ply":0,"positions":1`},
		{"report fails", broken, "GET", "/api/report", 500, `"error":"reading the report: table gone"`},
		{"start", &fakeSource{rep: rep}, "GET", "/api/position", 200, `"key":"b00000018180000000000001008000000"`},
		{"empty moves", &fakeSource{rep: rep}, "GET", "/api/position?moves=", 200, `"ply":0`},
		{"moves", &fakeSource{rep: rep}, "GET", "/api/position?moves=F5", 200, `"ply":1`},
		{"pass not due", &fakeSource{rep: rep}, "GET", "/api/position?moves=pa", 400, `pass, but black has a legal move`},
		{"illegal", &fakeSource{rep: rep}, "GET", "/api/position?moves=a1", 400, `"error":"moves: board: move 1: a1 for black: flips nothing"`},
		{"bad key", &fakeSource{rep: rep}, "GET", "/api/position?key=x", 400, `"error":"key:`},
		{"both", &fakeSource{rep: rep}, "GET", "/api/position?key=x&moves=f5", 400, `key or moves, not both`},
		{"two keys", &fakeSource{rep: rep}, "GET", "/api/position?moves=f5&moves=d6", 400, `one move list`},
		{"not in run", notIn, "GET", "/api/position?moves=f5d6", 404, `"rows":["........","........","........","...OX...","...OXX..","...O....","........","........"]`},
		{"lookup fails", broken, "GET", "/api/position?moves=f5", 500, `"error":"looking up the position: blob gone"`},
		{"progress", broken, "GET", "/api/progress", 200, `"live":false`},
		{"no such endpoint", broken, "GET", "/api/nothing", 404, `"error":"no such endpoint: /api/nothing"`},
		{"post", broken, "POST", "/api/report", 405, `GET only`},
		{"put page", broken, "PUT", "/", 405, `GET only`},
		{"delete", broken, "DELETE", "/api/position?moves=f5", 405, `GET only`},
		{"head", broken, "HEAD", "/api/report", 405, ``},
		{"page", broken, "GET", "/", 200, `<script src="app.js" defer></script>`},
		{"script", broken, "GET", "/app.js", 200, `api/position?`},
		{"no such file", broken, "GET", "/secret.txt", 404, `not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, Config{Source: tc.src, Origin: message.StandardOrigin(b)})
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptest.NewRequest(tc.method, tc.target, nil))
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
				t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.target, w.Code, w.Body.String(), tc.status, tc.want)
			}
			if tc.status == 405 && w.Header().Get("Allow") != "GET" {
				t.Errorf("405 without Allow: GET")
			}
			if !strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("no content security policy")
			}
		})
	}
}

// TestLoopbackOnlyAnswersLoopbackNames serves on 127.0.0.1 and asks with
// Host headers a rebinding attack would send; on other addresses any
// name is served.
func TestLoopbackOnlyAnswersLoopbackNames(t *testing.T) {
	s := newServer(t, Config{Source: &fakeSource{rep: &report.Report{}}, Origin: message.StandardOrigin(board.MustNew(8))})
	loopback := serve(t, s, "127.0.0.1:0")
	everywhere := strings.Replace(serve(t, s, "0.0.0.0:0"), "0.0.0.0", "127.0.0.1", 1)
	for _, tc := range []struct {
		base, host string
		want       int
	}{
		{loopback, "", 200},
		{loopback, "localhost:8080", 200},
		{loopback, "127.0.0.1", 200},
		{loopback, "[::1]:80", 200},
		{loopback, "evil.example:8080", 403},
		{loopback, "127.0.0.1.evil.example", 403},
		{everywhere, "evil.example:8080", 200},
	} {
		req, err := http.NewRequest(http.MethodGet, tc.base+"api/progress", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s with Host %q: status %d, want %d", tc.base, tc.host, resp.StatusCode, tc.want)
		}
	}
}

func TestProgress(t *testing.T) {
	p := &pipeline.Progress{}
	started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newServer(t, Config{Source: &fakeSource{}, Origin: message.StandardOrigin(board.MustNew(8)), Progress: p, Started: started, Poll: 250 * time.Millisecond})
	p.Tasks.Store(3)
	p.Add(1000, 4000)
	p.Merges.Store(2)
	got := s.snapshot(started.Add(2 * time.Second))
	want := Progress{Live: true, Ply: -1, Tasks: 3, Positions: 1000, Edges: 4000, Merges: 2, ElapsedSeconds: 2, PositionsPerSecond: 500, EdgesPerSecond: 2000, PollMillis: 250, ReportPolls: ReportPolls}
	if got != want {
		t.Errorf("progress %+v, want %+v", got, want)
	}
	p.Started(message.Message{Kind: message.KindMerge, Ply: 7})
	if got := s.snapshot(started.Add(2 * time.Second)); got.Ply != 7 || got.Current != "merging ply 7" {
		t.Errorf("after a merge of ply 7 started: %+v", got)
	}
	p.SetStep(task.Step{Ply: 14, Name: "merging", Done: 10, Total: 80, At: started})
	if got := s.snapshot(started.Add(2 * time.Second)); got.Step != "ply 14: 10/80 bucket merges" || got.StepDone != 10 || got.StepTotal != 80 || got.StepETASeconds != 0 {
		t.Errorf("after a first status reading: %+v", got)
	}
	p.SetStep(task.Step{Ply: 14, Name: "merging", Done: 30, Total: 80, At: started.Add(40 * time.Second)})
	if got := s.snapshot(started.Add(2 * time.Second)); got.StepDone != 30 || got.StepETASeconds != 100 {
		t.Errorf("20 buckets in 40 s, 50 to go: %+v, want 100 s left", got)
	}
	p.Started(message.Message{Kind: message.KindInline, Ply: 0})
	if got := s.snapshot(started.Add(2 * time.Second)); got.Ply != 0 || got.Current != "expanding ply 0" {
		t.Errorf("after an expansion of ply 0 started: %+v", got)
	}
	s.finish(started.Add(time.Second))
	s.finish(started.Add(time.Hour)) // the first call counts
	if got := s.snapshot(started.Add(time.Minute)); !got.Finished || got.ElapsedSeconds != 1 || got.PositionsPerSecond != 1000 {
		t.Errorf("after finishing at 1 s: %+v", got)
	}
}

func TestNewChecksConfig(t *testing.T) {
	b := board.MustNew(4)
	for name, cfg := range map[string]Config{
		"no source": {Origin: message.StandardOrigin(b)},
		"no board":  {Source: &fakeSource{}},
		"bad start": {Source: &fakeSource{}, Origin: message.Origin{Board: b, Start: board.Position{Occ: 1, White: 2}}},
		"poll":      {Source: &fakeSource{}, Origin: message.StandardOrigin(b), Poll: time.Millisecond},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{":8080", "127.0.0.1:8080"},
		{":0", "127.0.0.1:0"},
		{"127.0.0.1:9", "127.0.0.1:9"},
		{"0.0.0.0:80", "0.0.0.0:80"},
		{"[::1]:80", "[::1]:80"},
		{"localhost:1", "localhost:1"},
		{"8080", ""},
		{"", ""},
		{":http", ""},
		{":65536", ""},
		{":-1", ""},
		{":080", ""},
		{"a:b:c", ""},
	} {
		got, err := ListenAddr(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") || err != nil && !errors.Is(err, ErrBadAddr) {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzListenAddr(f *testing.F) {
	for _, s := range []string{":8080", "127.0.0.1:0", "[::1]:80", "x", ":", "[:1]:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		got, err := ListenAddr(addr)
		if err != nil {
			return
		}
		again, err := ListenAddr(got)
		if err != nil || again != got {
			t.Errorf("ListenAddr(%q) = %q, which resolves to %q, %v", addr, got, again, err)
		}
	})
}

// FuzzPosition asks for positions with any query: the answer is 200 for
// a position, 400 for bad input, or 404 for one the fake run lacks, and
// always JSON.
func FuzzPosition(f *testing.F) {
	for _, s := range []string{"", "moves=f5d6", "moves=f5%20pa", "moves=d3,c4%20pa", "moves=d3c", "key=b00000018180000000000001008000000", "key=x&moves=y", "moves=c4e3f6e6f5c5c3", "%zz"} {
		f.Add(s)
	}
	b := board.MustNew(8)
	s := newServer(f, Config{Source: &fakeSource{}, Origin: message.StandardOrigin(b)})
	notIn := newServer(f, Config{Source: &fakeSource{lookupErr: pipeline.ErrNotInRun}, Origin: message.StandardOrigin(b)})
	later, err := b.ParseMoves("f5d6c3")
	if err != nil {
		f.Fatal(err)
	}
	fromLater := newServer(f, Config{Source: &fakeSource{}, Origin: message.Origin{Board: b, Start: later}}) // as with -start
	f.Fuzz(func(t *testing.T, query string) {
		for _, h := range []*Server{s, notIn, fromLater} {
			w := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/api/position", nil)
			req.URL.RawQuery = query
			h.ServeHTTP(w, req)
			var out map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
				t.Fatalf("query %q: %v in %q", query, err, w.Body.String())
			}
			switch w.Code {
			case 200, 404:
				if _, ok := out["rows"]; !ok {
					t.Errorf("query %q: %d without a board", query, w.Code)
				}
			case 400:
				if out["error"] == "" {
					t.Errorf("query %q: 400 without an error", query)
				}
			default:
				t.Errorf("query %q: status %d", query, w.Code)
			}
		}
	})
}

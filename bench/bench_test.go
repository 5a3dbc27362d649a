package bench

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/report"
)

func TestYardstick(t *testing.T) {
	t.Run("4x4 to the end", func(t *testing.T) {
		rep := Yardstick(board.MustNew(4), 12)
		if rep.Root != "white" {
			t.Errorf("root %s, want white", rep.Root)
		}
		for i, want := range testkit.Ref4x4 {
			p := rep.Plies[i]
			got := [6]int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws}
			if got != want || p.Unknown != 0 {
				t.Errorf("ply %d: %v unknown %d, want %v unknown 0", i, got, p.Unknown, want)
			}
		}
	})
	t.Run("8x8 through ply 9", func(t *testing.T) {
		rep := Yardstick(board.MustNew(8), 9)
		for i := range testkit.Ref8x8Positions {
			if p := rep.Plies[i]; p.Positions != testkit.Ref8x8Positions[i] || p.Edges != testkit.Ref8x8Edges[i] || p.Terminal != 0 {
				t.Errorf("ply %d: %d positions, %d edges, %d terminal; want %d, %d, 0", i, p.Positions, p.Edges, p.Terminal, testkit.Ref8x8Positions[i], testkit.Ref8x8Edges[i])
			}
		}
		if p := rep.Plies[8]; p.BlackWins != 43 || p.WhiteWins != 0 {
			t.Errorf("ply 8: %d black wins, %d white wins; want 43 and 0", p.BlackWins, p.WhiteWins)
		}
	})
}

// TestExternal checks the external counter's positions, terminal
// positions and edges per ply against the yardstick's and the published
// tables, with the default bucket size and with buckets so small that a
// ply spreads over many, and that it leaves its directory empty.
func TestExternal(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		target    int
		perBucket int        // 0: the default
		ref       [][3]int64 // published positions, terminal, edges of the first plies
	}{
		{"4x4 to the end", 4, 12, 0, ref4x4()},
		{"4x4 to the end, about 50 children a bucket", 4, 12, 50, ref4x4()},
		{"6x6 through ply 9, about 1000 children a bucket", 6, 9, 1000, nil},
		{"8x8 through ply 9", 8, 9, 0, ref8x8()},
		{"8x8 through ply 7, about 200 children a bucket", 8, 7, 200, ref8x8()[:8]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := board.MustNew(tc.size)
			dir := t.TempDir()
			got, err := External{Dir: dir, BucketChildren: tc.perBucket}.Enumerate(b, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if d := report.DiffCounts(Yardstick(b, tc.target), got); d != "" {
				t.Errorf("against the yardstick: %s", d)
			}
			for i, want := range tc.ref {
				p := got.Plies[i]
				if g := [3]int64{p.Positions, p.Terminal, p.Edges}; g != want {
					t.Errorf("ply %d: positions, terminal, edges %v; published %v", i, g, want)
				}
			}
			for _, p := range got.Plies {
				if p.Unknown != p.Positions || p.BlackWins+p.WhiteWins+p.Draws != 0 {
					t.Errorf("ply %d: %d positions, %d unknown, %d decided; want every result unknown", p.Ply, p.Positions, p.Unknown, p.BlackWins+p.WhiteWins+p.Draws)
				}
			}
			if got.Root != "unknown" {
				t.Errorf("root %s, want unknown", got.Root)
			}
			if left, err := os.ReadDir(dir); err != nil || len(left) > 0 {
				t.Errorf("left in its directory: %v (%v)", left, err)
			}
		})
	}
}

// TestCheck runs the yardstick and the external counter through 8x8
// ply 9, where the yardstick decides 43 positions of ply 8 and the
// counter none: check passes the counter on its counts alone, and would
// not pass an engine that decides results with the counter's report.
func TestCheck(t *testing.T) {
	b := board.MustNew(8)
	want := Yardstick(b, 9)
	got, err := External{Dir: t.TempDir()}.Enumerate(b, 9)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		engine string
		ok     bool
	}{
		{EngineExternal, true},
		{EngineReference, false},
		{EngineEmbedded, false},
	}
	for _, tc := range tests {
		if d := check(tc.engine, want, got); (d == "") != tc.ok {
			t.Errorf("%s: check %q, want it to pass: %v", tc.engine, d, tc.ok)
		}
	}
}

// ref4x4 is the published 4x4 table's positions, terminal positions and
// edges.
func ref4x4() [][3]int64 {
	var out [][3]int64
	for _, r := range testkit.Ref4x4 {
		out = append(out, [3]int64{r[0], r[1], r[2]})
	}
	return out
}

// ref8x8 is the published 8x8 table's positions, terminal positions
// (none) and edges, plies 0 to 8.
func ref8x8() [][3]int64 {
	var out [][3]int64
	for i, n := range testkit.Ref8x8Positions {
		out = append(out, [3]int64{n, 0, testkit.Ref8x8Edges[i]})
	}
	return out
}

// TestBucketOf checks that the external counter's hash spreads a ply's
// positions evenly over its buckets.
func TestBucketOf(t *testing.T) {
	b := board.MustNew(8)
	ply := map[board.Position]bool{b.Canonical(b.Start()): true}
	for range 6 {
		next := map[board.Position]bool{}
		for p := range ply {
			kids, _ := b.Children(p, nil)
			for _, k := range kids {
				next[k] = true
			}
		}
		ply = next
	}
	for _, n := range []int{1, 7, 16} {
		counts := make([]int, n)
		for p := range ply {
			counts[bucketOf(p, n)]++
		}
		even := len(ply) / n
		for i, c := range counts {
			if c < even*3/4 || c > even*5/4 {
				t.Errorf("%d buckets: bucket %d holds %d of %d positions, want about %d", n, i, c, len(ply), even)
			}
		}
	}
}

// TestHarness runs cmd/bench as make bench does, at 8x8 ply 6, with every
// engine (Azurite when a connection string is set; make test sets one),
// and checks its CSV: a row per engine, exact counts, the pipeline's
// storage figures filled in.
func TestHarness(t *testing.T) {
	engines := []string{EngineYardstick, EngineReference, EngineExternal, EngineEmbedded}
	if os.Getenv("AZURE_STORAGE_CONNECTION_STRING") != "" {
		engines = append(engines, EngineAzurite)
	} else if os.Getenv("REVERSI_REQUIRE_AZURITE") == "1" {
		t.Fatal("AZURE_STORAGE_CONNECTION_STRING is not set but REVERSI_REQUIRE_AZURITE=1")
	}
	bin := t.TempDir()
	for _, c := range []string{"bench", "seed", "worker"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, c), "../cmd/"+c).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", c, err, out)
		}
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "bench"), "-plies", "6", "-engines", strings.Join(engines, ","), "-bin", bin, "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bench: %v\n%s", err, b)
	}
	f, err := os.Open(filepath.Join(out, CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], CSVHeader) {
		t.Fatalf("header %v, want %v", recs[0], CSVHeader)
	}
	if len(recs)-1 != len(engines) {
		t.Fatalf("%d rows, want one per engine %v", len(recs)-1, engines)
	}
	var positions, edges int64
	for i := 0; i <= 6; i++ {
		positions += testkit.Ref8x8Positions[i]
		edges += testkit.Ref8x8Edges[i]
	}
	for i, rec := range recs[1:] {
		row := map[string]string{}
		for j, h := range CSVHeader {
			row[h] = rec[j]
		}
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(strings.Fields(row[k] + " 0")[0], 64)
			if err != nil {
				t.Fatalf("%s: %s %q: %v", row["engine"], k, row[k], err)
			}
			return v
		}
		e := engines[i]
		if row["engine"] != e || row["ply"] != "6" {
			t.Errorf("row %d: engine %s ply %s, want %s ply 6", i, row["engine"], row["ply"], e)
		}
		if int64(num("positions")) != positions || int64(num("edges")) != edges || row["root"] != "unknown" {
			t.Errorf("%s: %s positions, %s edges, root %s; want %d, %d, unknown", e, row["positions"], row["edges"], row["root"], positions, edges)
		}
		if wantCheck := map[bool]string{true: "-", false: "ok"}[e == EngineYardstick]; row["check"] != wantCheck {
			t.Errorf("%s: check %q, want %q", e, row["check"], wantCheck)
		}
		if num("wall_s") <= 0 || num("cpu_s") <= 0 || num("peak_rss_bytes") < 1<<20 {
			t.Errorf("%s: wall %s s, CPU %s s, peak RSS %s bytes: want them measured", e, row["wall_s"], row["cpu_s"], row["peak_rss_bytes"])
		}
		pipeline := e == EngineEmbedded || e == EngineAzurite
		if !pipeline {
			if num("tx_total") != 0 || num("stored_bytes") != 0 {
				t.Errorf("%s: %s transactions, %s bytes stored; an in-memory engine has none", e, row["tx_total"], row["stored_bytes"])
			}
			continue
		}
		for _, k := range []string{"tx_enumeration", "tx_dedup", "tx_results"} {
			if num(k) <= 0 {
				t.Errorf("%s: %s is %s, want the pipeline's calls counted there", e, k, row[k])
			}
		}
		// Every final position is stored, and every position of the
		// last ply passes through a merge.
		if num("bytes_per_position") <= 0 || num("merged_keys") < float64(testkit.Ref8x8Positions[6]) {
			t.Errorf("%s: %s bytes stored per position, %s merged keys", e, row["bytes_per_position"], row["merged_keys"])
		}
		if e == EngineEmbedded && num("peak_disk_bytes") <= 0 {
			t.Errorf("embedded: peak disk %s bytes, want it measured", row["peak_disk_bytes"])
		}
		if e == EngineAzurite && len(strings.Fields(row["peak_rss_bytes"])) != 2 {
			t.Errorf("azurite: peak RSS %q, want one figure per worker process", row["peak_rss_bytes"])
		}
	}
	if _, err := os.Stat(filepath.Join(out, MarkdownFile)); err != nil {
		t.Error(err)
	}
}

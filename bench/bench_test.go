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

// TestHarness runs cmd/bench as make bench does, at 8x8 ply 6, with every
// engine (Azurite when a connection string is set; make test sets one),
// and checks its CSV: a row per engine, exact counts, the pipeline's
// storage figures filled in.
func TestHarness(t *testing.T) {
	engines := []string{EngineYardstick, EngineReference, EngineEmbedded}
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

package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestSetTransactions(t *testing.T) {
	tests := []struct {
		name      string
		edges     []int64
		byCat     map[string]int64
		total     int64
		perEdge   float64
		backtrack float64
	}{
		{"split per edge", []int64{0, 4, 6}, map[string]int64{"backtrack": 2, "dedup": 3, "enumeration": 5}, 10, 1, 0.2},
		{"a run of billions of edges keeps its digits", []int64{0, 4e9, 6e9}, map[string]int64{"backtrack": 98000, "dedup": 126000}, 224000, 2.24e-05, 9.8e-06},
		{"no edges leaves per-edge figures empty", []int64{0}, map[string]int64{"control": 7}, 7, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{}
			for i, e := range tc.edges {
				r.Plies = append(r.Plies, Ply{Ply: i, Edges: e})
			}
			r.SetTransactions(tc.byCat)
			if r.StorageTransactions != tc.total || r.TransactionsPerEdge != tc.perEdge || r.TransactionsPerEdgeByCategory["backtrack"] != tc.backtrack {
				t.Errorf("total %d, per edge %v, backtrack per edge %v; want %d, %v, %v",
					r.StorageTransactions, r.TransactionsPerEdge, r.TransactionsPerEdgeByCategory["backtrack"], tc.total, tc.perEdge, tc.backtrack)
			}
			var out bytes.Buffer
			if err := r.WriteTable(&out); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("(%.3g per edge; backtrack %.3g;", tc.perEdge, tc.backtrack); tc.perEdge > 0 && !strings.Contains(out.String(), want) {
				t.Errorf("table does not show %q:\n%s", want, out.String())
			}
		})
	}
}

func TestDiff(t *testing.T) {
	want := &Report{Root: "black", Plies: []Ply{{Positions: 1, Edges: 0, BlackWins: 1}, {Ply: 1, Positions: 2, Terminal: 1, Edges: 3, BlackWins: 2}}}
	counted := &Report{Root: "unknown", Plies: []Ply{{Positions: 1, Unknown: 1}, {Ply: 1, Positions: 2, Terminal: 1, Edges: 3, Unknown: 2}}}
	miscounted := &Report{Root: "black", Plies: []Ply{{Positions: 1, BlackWins: 1}, {Ply: 1, Positions: 2, Terminal: 1, Edges: 4, BlackWins: 2}}}
	short := &Report{Root: "black", Plies: want.Plies[:1]}
	tests := []struct {
		name       string
		got        *Report
		diff, cnts string // Diff's and DiffCounts' answers
	}{
		{"equal", want, "", ""},
		{"results unknown, counts equal", counted, "root unknown, want black", ""},
		{"an edge more", miscounted, "ply 1: positions/terminal/edges/black/white/draw/unknown [2 1 4 2 0 0 0], want [2 1 3 2 0 0 0]",
			"ply 1: positions/terminal/edges [2 1 4], want [2 1 3]"},
		{"a ply less", short, "1 plies, want 2", "1 plies, want 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := Diff(want, tc.got); d != tc.diff {
				t.Errorf("Diff: %q, want %q", d, tc.diff)
			}
			if d := DiffCounts(want, tc.got); d != tc.cnts {
				t.Errorf("DiffCounts: %q, want %q", d, tc.cnts)
			}
		})
	}
}

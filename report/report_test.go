package report

import (
	"bytes"
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
			if tc.perEdge > 0 && !strings.Contains(out.String(), "backtrack 0.2000") {
				t.Errorf("table does not show the backtracking cost per edge:\n%s", out.String())
			}
		})
	}
}

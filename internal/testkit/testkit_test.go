package testkit

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// readTable reads one of the tables in testdata/reference: lines starting
// with # are comments, the first other line names the columns, and each
// following line holds one integer per column. It returns the rows by
// column name, in file order.
func readTable(t *testing.T, name string) map[string][]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reference", name))
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	cols := map[string][]int64{}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if header == nil {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			t.Fatalf("%s:%d: %d fields, header has %d", name, i+1, len(fields), len(header))
		}
		for k, f := range fields {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: column %s: %v", name, i+1, header[k], err)
			}
			cols[header[k]] = append(cols[header[k]], v)
		}
	}
	if header == nil {
		t.Fatalf("%s: no header line", name)
	}
	return cols
}

// column returns column k of Ref4x4-shaped rows.
func column(rows [][6]int64, k int) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[k]
	}
	return out
}

// TestReferenceFiles checks that the Go values other packages test against
// are exactly the published tables kept in testdata/reference.
func TestReferenceFiles(t *testing.T) {
	plies := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	tests := []struct {
		file string
		want map[string][]int64
	}{
		{"4x4.txt", map[string][]int64{
			"ply":       plies(len(Ref4x4)),
			"positions": column(Ref4x4, 0),
			"terminal":  column(Ref4x4, 1),
			"edges":     column(Ref4x4, 2),
			"black":     column(Ref4x4, 3),
			"white":     column(Ref4x4, 4),
			"draw":      column(Ref4x4, 5),
		}},
		{"8x8.txt", map[string][]int64{
			"ply":       plies(len(Ref8x8Positions)),
			"positions": Ref8x8Positions,
			"edges":     Ref8x8Edges,
			"unreduced": Ref8x8Unreduced,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := readTable(t, tc.file)
			for name := range got {
				if _, ok := tc.want[name]; !ok {
					t.Errorf("column %s: in the file, not in the Go tables", name)
				}
			}
			for name, want := range tc.want {
				if !reflect.DeepEqual(got[name], want) {
					t.Errorf("column %s: file %v, Go %v", name, got[name], want)
				}
			}
		})
	}
}

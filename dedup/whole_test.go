package dedup

import (
	"fmt"
	"testing"
)

func TestWhole(t *testing.T) {
	tests := []struct {
		name       string
		records    []Record
		fanIn      int
		maxEntries int64
		groups     []Group
		rest       []string
	}{
		{
			name:    "a component that fits is one final group, oldest first",
			records: []Record{rec("b", 0, 5, 2), rec("a", 3, 9, 1), rec("c", 8, 12, 3)},
			fanIn:   4,
			groups:  []Group{{IDs: []string{"a", "b", "c"}, Final: true, Count: 30}},
		},
		{
			name:    "each fitting component is its own group; a lone record is left",
			records: []Record{rec("a", 0, 5, 1), rec("b", 2, 4, 2), rec("c", 10, 12, 3), rec("d", 20, 30, 4), rec("e", 25, 26, 5)},
			fanIn:   2,
			groups:  []Group{{IDs: []string{"a", "b"}, Final: true, Count: 20}, {IDs: []string{"d", "e"}, Final: true, Count: 20}},
			rest:    []string{"c"},
		},
		{
			name:    "more records than the fan-in are left for Plan",
			records: []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2), rec("c", 0, 9, 3)},
			fanIn:   2,
			rest:    []string{"a", "b", "c"},
		},
		{
			name:       "more entries than maxEntries are left for Plan",
			records:    []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2)},
			fanIn:      16,
			maxEntries: 19,
			rest:       []string{"a", "b"},
		},
		{
			name:    "a component with a merging record is left for Plan",
			records: []Record{rec("a", 0, 9, 1), merging(rec("b", 5, 12, 2)), rec("c", 11, 20, 3), rec("d", 30, 40, 4), rec("e", 35, 50, 5)},
			fanIn:   16,
			groups:  []Group{{IDs: []string{"d", "e"}, Final: true, Count: 20}},
			rest:    []string{"a", "b", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, rest := Whole(tt.records, tt.fanIn, tt.maxEntries)
			if fmt.Sprint(groups) != fmt.Sprint(tt.groups) {
				t.Errorf("groups\n%v\nwant\n%v", groups, tt.groups)
			}
			var ids []string
			for _, r := range rest {
				ids = append(ids, r.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tt.rest) {
				t.Errorf("rest %v, want %v", ids, tt.rest)
			}
		})
	}
}

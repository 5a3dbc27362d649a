package dedup

import (
	"cmp"
	"slices"
)

// Whole takes out the overlap components that one merge can take whole:
// more than one record, at most fanIn of them, none merging, and (if
// maxEntries > 0) at most maxEntries entries in all. Each becomes a final
// group, oldest record first; the records of every other component are
// returned in rest, in their original order, for Plan.
//
// Plan's partner rules choose among runs that cannot all be merged at
// once. When a whole component fits in one merge there is nothing to
// choose, and merging it in pieces would only read its runs again: with
// runs cut at the ply's splitters, a bucket's runs are usually one such
// component, and this makes one merge per bucket read each entry once.
func Whole(records []Record, fanIn int, maxEntries int64) (groups []Group, rest []Record) {
	keep := make([]bool, len(records))
	components(records, func(comp []int) {
		var total int64
		fits := len(comp) > 1 && len(comp) <= max(fanIn, 2)
		for _, i := range comp {
			fits = fits && !records[i].Merging
			total += records[i].Count
		}
		if !fits || maxEntries > 0 && total > maxEntries {
			for _, i := range comp {
				keep[i] = true
			}
			return
		}
		ids := slices.Clone(comp)
		slices.SortFunc(ids, func(a, b int) int {
			return cmp.Or(cmp.Compare(records[a].Created, records[b].Created), cmp.Compare(records[a].ID, records[b].ID))
		})
		g := Group{IDs: make([]string, len(ids)), Final: true, Count: total}
		for k, i := range ids {
			g.IDs[k] = records[i].ID
		}
		groups = append(groups, g)
	})
	for i, r := range records {
		if keep[i] {
			rest = append(rest, r)
		}
	}
	return groups, rest
}

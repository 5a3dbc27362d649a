package dedup

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// at returns the position numbered n in key order, for readable ranges.
func at(n uint64) board.Position { return board.Position{Occ: n} }

// rec returns a live record of 10 entries over [lo, hi], created at t.
func rec(id string, lo, hi uint64, t int64) Record {
	return Record{ID: id, Min: at(lo), Max: at(hi), Created: t, Count: 10}
}

func merging(r Record) Record { r.Merging = true; return r }

func withCount(r Record, n int64) Record { r.Count = n; return r }

func TestOverlapsAndPriority(t *testing.T) {
	r := rec("r", 10, 20, 0)
	tests := []struct {
		name     string
		p        Record
		priority int
	}{
		{"disjoint below", rec("p", 0, 9, 1), 0},
		{"disjoint above", rec("p", 21, 30, 1), 0},
		{"touching below", rec("p", 0, 10, 1), 3},
		{"touching above", rec("p", 20, 30, 1), 4},
		{"equal", rec("p", 10, 20, 1), 1},
		{"other contains mine", rec("p", 5, 25, 1), 1},
		{"other contains mine, same min", rec("p", 10, 25, 1), 1},
		{"mine contains other", rec("p", 12, 18, 1), 2},
		{"mine contains other, same max", rec("p", 12, 20, 1), 2},
		{"other's min below", rec("p", 5, 15, 1), 3},
		{"other overlaps above", rec("p", 15, 25, 1), 4},
		{"side orders first", Record{Min: board.Position{Side: board.White}, Max: board.Position{Side: board.White, Occ: 1}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Overlaps(r, tt.p); got != (tt.priority != 0) {
				t.Errorf("Overlaps = %v", got)
			}
			if got := Overlaps(tt.p, r); got != (tt.priority != 0) {
				t.Errorf("Overlaps reversed = %v", got)
			}
			if got := Priority(r, tt.p); got != tt.priority {
				t.Errorf("Priority = %d, want %d", got, tt.priority)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name       string
		records    []Record
		fanIn      int
		maxEntries int64
		groups     []Group
		complete   bool
	}{
		{name: "no records", complete: true},
		{name: "one record", records: []Record{rec("a", 0, 9, 0)}, complete: true},
		{
			name:     "disjoint",
			records:  []Record{rec("c", 20, 29, 0), rec("a", 0, 9, 1), rec("b", 10, 19, 2)},
			complete: true,
		},
		{
			name:    "two overlapping",
			records: []Record{rec("new", 5, 15, 2), rec("old", 0, 9, 1)},
			groups:  []Group{{IDs: []string{"old", "new"}, Final: true, Count: 20}},
		},
		{
			name:    "closed ranges: touching ends overlap",
			records: []Record{rec("a", 0, 10, 1), rec("b", 10, 20, 2)},
			groups:  []Group{{IDs: []string{"a", "b"}, Final: true, Count: 20}},
		},
		{
			name:    "a merging record alone blocks completeness",
			records: []Record{rec("a", 0, 9, 1), merging(rec("b", 10, 19, 2))},
		},
		{
			name:    "merging records are never grouped",
			records: []Record{merging(rec("m", 0, 30, 0)), rec("a", 5, 15, 1), merging(rec("n", 8, 12, 2))},
		},
		{
			name:    "a group next to a merge is not final",
			records: []Record{merging(rec("m", 0, 30, 0)), rec("a", 1, 5, 1), rec("b", 4, 8, 2)},
			groups:  []Group{{IDs: []string{"a", "b"}, Count: 20}},
		},
		{
			name:    "components are independent",
			records: []Record{rec("x", 40, 41, 0), rec("d", 22, 30, 4), rec("c", 20, 25, 3), rec("b", 3, 8, 2), rec("a", 0, 5, 1)},
			groups: []Group{
				{IDs: []string{"a", "b"}, Final: true, Count: 20},
				{IDs: []string{"c", "d"}, Final: true, Count: 20},
			},
		},
		{
			name:    "chained overlaps form one component",
			records: []Record{rec("a", 0, 10, 1), rec("b", 10, 20, 2), rec("c", 20, 30, 3)},
			groups:  []Group{{IDs: []string{"a", "b"}, Count: 20}}, // c overlaps only b: alone this round
		},
		{
			name:    "fanIn bound",
			fanIn:   3,
			records: []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2), rec("c", 0, 9, 3), rec("d", 0, 9, 4), rec("e", 0, 9, 5)},
			groups: []Group{
				{IDs: []string{"a", "b", "c"}, Count: 30},
				{IDs: []string{"d", "e"}, Count: 20},
			},
		},
		{
			name:    "fanIn below 2 is 2",
			fanIn:   1,
			records: []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2), rec("c", 0, 9, 3)},
			groups:  []Group{{IDs: []string{"a", "b"}, Count: 20}},
		},
		{
			name:       "maxEntries bound",
			maxEntries: 25,
			records:    []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2), rec("c", 0, 9, 3), rec("d", 0, 9, 4), rec("e", 0, 9, 5)},
			groups: []Group{
				{IDs: []string{"a", "b"}, Count: 20},
				{IDs: []string{"c", "d"}, Count: 20},
			},
		},
		{
			name:       "maxEntries stops at the first partner that does not fit",
			maxEntries: 40,
			records:    []Record{withCount(rec("a", 0, 9, 1), 10), withCount(rec("b", 0, 9, 2), 10), withCount(rec("c", 0, 9, 3), 25), withCount(rec("d", 0, 9, 4), 5)},
			groups: []Group{
				{IDs: []string{"a", "b"}, Count: 20},
				{IDs: []string{"c", "d"}, Final: false, Count: 30},
			},
		},
		{
			name:       "maxEntries still gives one partner",
			maxEntries: 5,
			records:    []Record{rec("a", 0, 9, 1), rec("b", 0, 9, 2)},
			groups:     []Group{{IDs: []string{"a", "b"}, Final: true, Count: 20}},
		},
		{
			name:    "a record with no free partner stays alone",
			records: []Record{rec("A", 0, 10, 1), rec("B", 2, 3, 2), rec("C", 5, 6, 3)},
			fanIn:   2,
			groups:  []Group{{IDs: []string{"A", "B"}, Count: 20}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fanIn := tt.fanIn
			if fanIn == 0 {
				fanIn = 16
			}
			groups, complete := Plan(tt.records, fanIn, tt.maxEntries)
			if complete != tt.complete {
				t.Errorf("complete = %v, want %v", complete, tt.complete)
			}
			if fmt.Sprint(groups) != fmt.Sprint(tt.groups) {
				t.Errorf("groups\n%v\nwant\n%v", groups, tt.groups)
			}
		})
	}
}

// TestPlanPriority builds, for the oldest record r = [10, 20], one partner
// of each class, with the better classes younger, and removes the winners
// one by one: each class must win over every worse class despite its age.
// Ties within a class go to the older record, then the smaller ID.
func TestPlanPriority(t *testing.T) {
	r := rec("r", 10, 20, 0)
	c1 := rec("contains-mine", 5, 25, 40)
	c2 := rec("mine-contains", 12, 18, 30)
	c3 := rec("min-below", 5, 15, 20)
	c4 := rec("overlap", 15, 25, 10)
	tests := []struct {
		name    string
		records []Record
		want    string // r's partner with fanIn 2
	}{
		{"class 1 wins", []Record{r, c4, c3, c2, c1}, c1.ID},
		{"class 2 wins", []Record{r, c4, c3, c2}, c2.ID},
		{"class 3 wins", []Record{r, c4, c3}, c3.ID},
		{"class 4 wins", []Record{r, c4}, c4.ID},
		{"older wins within a class", []Record{r, rec("young", 0, 30, 9), rec("old", 0, 30, 8)}, "old"},
		{"smaller ID wins within a class and age", []Record{r, rec("y", 0, 30, 8), rec("x", 0, 30, 8)}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, _ := Plan(tt.records, 2, 0)
			if len(groups) == 0 || !slices.Equal(groups[0].IDs, []string{"r", tt.want}) {
				t.Fatalf("first group %v, want [r %s]", groups, tt.want)
			}
		})
	}
	t.Run("all classes in order", func(t *testing.T) {
		groups, _ := Plan([]Record{c2, c4, r, c1, c3}, 16, 0)
		want := []Group{{IDs: []string{"r", c1.ID, c2.ID, c3.ID, c4.ID}, Final: true, Count: 50}}
		if fmt.Sprint(groups) != fmt.Sprint(want) {
			t.Fatalf("groups %v, want %v", groups, want)
		}
	})
}

// sim is an in-memory ply: runs keyed by record ID, merged as Plan says.
type sim struct {
	records []Record
	runs    map[string][]Entry
	clock   int64
	nextID  int
	reads   map[Entry]int // times each entry was read by a merge
	total   int64         // entries read by all merges
}

func (s *sim) add(es []Entry) {
	s.clock++
	s.nextID++
	id := strconv.Itoa(s.nextID)
	s.runs[id] = es
	s.records = append(s.records, Record{ID: id, Min: es[0].Pos, Max: es[len(es)-1].Pos, Created: s.clock, Count: int64(len(es))})
}

// apply merges every group of one Plan, as parallel workers would, and
// replaces their records. A final group's output is split into chunks of
// at most chunk entries, at position boundaries so that chunks do not
// overlap; other outputs stay one run.
func (s *sim) apply(t *testing.T, groups []Group, chunk int) {
	done := map[string]bool{}
	var outputs [][]Entry
	var finals []bool
	for _, g := range groups {
		var readers []*Reader
		var want int64
		for _, id := range g.IDs {
			if done[id] {
				t.Fatalf("record %s in two groups", id)
			}
			done[id] = true
			run := s.runs[id]
			for _, e := range run {
				s.reads[e]++
			}
			want += int64(len(run))
			readers = append(readers, newReader(bytes.NewReader(encode(run))))
		}
		if want != g.Count {
			t.Fatalf("group %v: Count %d, runs hold %d", g.IDs, g.Count, want)
		}
		var out []Entry
		read, err := Merge(readers, func(e Entry) error { out = append(out, e); return nil })
		if err != nil || read != want {
			t.Fatalf("merge %v: read %d of %d: %v", g.IDs, read, want, err)
		}
		s.total += read
		outputs = append(outputs, out)
		finals = append(finals, g.Final)
	}
	s.records = slices.DeleteFunc(s.records, func(r Record) bool { return done[r.ID] })
	for id := range done {
		delete(s.runs, id)
	}
	for i, out := range outputs {
		if !finals[i] {
			s.add(out)
			continue
		}
		for len(out) > 0 {
			n := min(chunk, len(out))
			for n < len(out) && out[n].Pos == out[n-1].Pos {
				n++ // one position's parents stay together
			}
			s.add(out[:n])
			out = out[n:]
		}
	}
}

// check verifies a complete ply: its runs, in key order, are the sorted,
// duplicate-free initial entries, and no two ranges overlap.
func (s *sim) check(t *testing.T, initial []Entry) {
	recs := slices.Clone(s.records)
	slices.SortFunc(recs, func(a, b Record) int { return board.Compare(a.Min, b.Min) })
	var all []Entry
	for i, r := range recs {
		if i > 0 && board.Compare(recs[i-1].Max, r.Min) >= 0 {
			t.Fatalf("records %v and %v overlap", recs[i-1], r)
		}
		all = append(all, s.runs[r.ID]...)
	}
	if !slices.IsSortedFunc(all, func(a, b Entry) int { return CompareEntries(a, b) }) {
		t.Fatal("runs are not sorted")
	}
	if want := sortedCompact(initial); !slices.Equal(all, want) {
		t.Fatalf("runs hold %d entries, want the %d distinct ones", len(all), len(want))
	}
	distinct := map[board.Position]bool{}
	for _, e := range initial {
		distinct[e.Pos] = true
	}
	var positions int
	for i, e := range all {
		if i == 0 || e.Pos != all[i-1].Pos {
			positions++
		}
	}
	if positions != len(distinct) {
		t.Fatalf("runs hold %d positions, want %d", positions, len(distinct))
	}
}

// run applies Plan until the ply is complete and returns the rounds taken.
func (s *sim) run(t *testing.T, fanIn int, maxEntries int64, chunk int) int {
	for round := 1; ; round++ {
		groups, complete := Plan(s.records, fanIn, maxEntries)
		if complete {
			if len(groups) != 0 {
				t.Fatalf("complete with groups %v", groups)
			}
			return round - 1
		}
		if len(groups) == 0 {
			t.Fatalf("round %d: not complete and no groups for %d records", round, len(s.records))
		}
		if round > 10000 {
			t.Fatal("no convergence")
		}
		byID := map[string]Record{}
		for _, r := range s.records {
			byID[r.ID] = r
		}
		for _, g := range groups {
			if len(g.IDs) < 2 || len(g.IDs) > max(fanIn, 2) {
				t.Fatalf("group of %d records, fanIn %d", len(g.IDs), fanIn)
			}
			if maxEntries > 0 && len(g.IDs) > 2 && g.Count > maxEntries {
				t.Fatalf("group %v holds %d entries, maxEntries %d", g.IDs, g.Count, maxEntries)
			}
			for _, id := range g.IDs[1:] {
				if !Overlaps(byID[g.IDs[0]], byID[id]) {
					t.Fatalf("group %v: %s does not overlap the oldest", g.IDs, id)
				}
				if byID[id].Created < byID[g.IDs[0]].Created {
					t.Fatalf("group %v: %s is older than its first record", g.IDs, id)
				}
			}
		}
		s.apply(t, groups, chunk)
	}
}

func newSim() *sim { return &sim{runs: map[string][]Entry{}, reads: map[Entry]int{}} }

// TestPlanConverges is the property test: whole-range runs, as fresh
// children are, merged by repeated Plans, end as sorted, duplicate-free,
// non-overlapping runs holding exactly the distinct entries, and each entry
// is read at most ceil(log_16 R)+1 times: merge work grows like N log N.
func TestPlanConverges(t *testing.T) {
	const runLen, chunk = 40, 40
	for _, runs := range []int{4, 64, 512} {
		t.Run(fmt.Sprintf("R=%d", runs), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(runs), 23))
			// Positions repeat across runs (different parents); the Ref's
			// blob is the run, so entries are unique and their reads can be
			// counted one by one.
			pool := randEntries(rng, runs*runLen/3, runs*runLen/3)
			s := newSim()
			var initial []Entry
			for i := range runs {
				es := make([]Entry, runLen)
				for j := range es {
					es[j] = Entry{Pos: pool[rng.IntN(len(pool))].Pos, Ref: Ref{uint32(i), uint32(j)}}
				}
				SortEntries(es)
				initial = append(initial, es...)
				s.add(es)
			}
			rounds := s.run(t, 16, 0, chunk)
			s.check(t, initial)
			bound := int(math.Ceil(math.Log(float64(runs))/math.Log(16)-1e-9)) + 1
			worst := 0
			for _, n := range s.reads {
				worst = max(worst, n)
			}
			t.Logf("R=%d: %d rounds, %d entries, %d reads (%.2f per entry), worst entry read %d times, bound %d, %d final runs",
				runs, rounds, len(initial), s.total, float64(s.total)/float64(len(initial)), worst, bound, len(s.records))
			if worst > bound {
				t.Errorf("an entry was read %d times, want at most %d", worst, bound)
			}
			if s.total > int64(bound*len(initial)) {
				t.Errorf("%d reads, want at most %d", s.total, bound*len(initial))
			}
		})
	}
}

// TestPlanConvergesRandom runs the same property on random sub-range runs
// with random fanIn, maxEntries and chunk size: convergence and content
// only, since ranges of all widths break the equal-size assumption of the
// read bound.
func TestPlanConvergesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 25))
	for iter := range 40 {
		fanIn := 2 + rng.IntN(15)
		maxEntries := int64(rng.IntN(3)) * int64(rng.IntN(200))
		chunk := 1 + rng.IntN(50)
		universe := sortedCompact(randEntries(rng, 500, 0))
		s := newSim()
		var initial []Entry
		for range 1 + rng.IntN(60) {
			lo := rng.IntN(len(universe))
			hi := lo + rng.IntN(len(universe)-lo)
			es := slices.Clone(universe[lo : hi+1])
			es = slices.DeleteFunc(es, func(Entry) bool { return rng.IntN(3) == 0 })
			if len(es) == 0 {
				continue
			}
			initial = append(initial, es...)
			s.add(es)
		}
		rounds := s.run(t, fanIn, maxEntries, chunk)
		s.check(t, initial)
		if testing.Verbose() && iter%10 == 0 {
			t.Logf("iteration %d: fanIn %d, maxEntries %d: %d rounds, %d reads for %d entries", iter, fanIn, maxEntries, rounds, s.total, len(initial))
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	const n = 10000
	rng := rand.New(rand.NewPCG(26, 27))
	whole := make([]Record, n)
	for i := range whole {
		lo, hi := rng.Uint64N(1<<20), rng.Uint64N(1<<20)+(1<<62)
		whole[i] = Record{ID: strconv.Itoa(i), Min: at(lo), Max: at(hi), Created: rng.Int64N(1 << 40), Count: 100000}
	}
	// Mostly settled: chunks of a finished ply plus a sprinkle of fresh,
	// narrow runs overlapping a few of them.
	settled := make([]Record, n)
	for i := range settled {
		lo := uint64(i) * 1000
		hi := lo + 999
		if i%10 == 0 {
			lo, hi = lo+500, lo+2500
		}
		settled[i] = Record{ID: strconv.Itoa(i), Min: at(lo), Max: at(hi), Created: rng.Int64N(1 << 40), Count: 1000}
	}
	// A worst case for partner search: one component of narrow runs, each
	// overlapping only its neighbours.
	chain := make([]Record, n)
	for i := range chain {
		lo := uint64(i) * 1000
		chain[i] = Record{ID: strconv.Itoa(i), Min: at(lo), Max: at(lo + 1500), Created: rng.Int64N(1 << 40), Count: 1000}
	}
	for _, bc := range []struct {
		name    string
		records []Record
	}{{"wholeRange10k", whole}, {"settled10k", settled}, {"chain10k", chain}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				groups, _ := Plan(bc.records, 16, 0)
				if len(groups) == 0 {
					b.Fatal("no groups")
				}
			}
		})
	}
}

// refPlan is Plan's specification written as plainly as possible, in
// O(n²): components from pairwise overlaps, partners by sorting every
// candidate.
func refPlan(records []Record, fanIn int, maxEntries int64) ([]Group, bool) {
	fanIn = max(fanIn, 2)
	n := len(records)
	label := make([]int, n)
	for i := range label {
		label[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if label[i] != i {
			label[i] = find(label[i])
		}
		return label[i]
	}
	complete := true
	for i := range n {
		if records[i].Merging {
			complete = false
		}
		for j := range i {
			if Overlaps(records[i], records[j]) {
				complete = false
				label[find(i)] = find(j)
			}
		}
	}
	members := map[int][]int{}
	for i := range n {
		members[find(i)] = append(members[find(i)], i)
	}
	var comps [][]int
	for _, m := range members {
		comps = append(comps, m)
	}
	lowest := func(c []int) board.Position {
		lo := records[c[0]].Min
		for _, i := range c {
			if board.Compare(records[i].Min, lo) < 0 {
				lo = records[i].Min
			}
		}
		return lo
	}
	slices.SortFunc(comps, func(a, b []int) int { return board.Compare(lowest(a), lowest(b)) })
	age := func(a, b Record) int {
		if a.Created != b.Created {
			return int(a.Created - b.Created)
		}
		return strings.Compare(a.ID, b.ID)
	}
	var groups []Group
	for _, c := range comps {
		if len(c) < 2 {
			continue
		}
		var live []Record
		for _, i := range c {
			if !records[i].Merging {
				live = append(live, records[i])
			}
		}
		slices.SortFunc(live, age)
		assigned := map[string]bool{}
		for _, r := range live {
			if assigned[r.ID] {
				continue
			}
			assigned[r.ID] = true
			var cands []Record
			for _, q := range live {
				if !assigned[q.ID] && Overlaps(r, q) {
					cands = append(cands, q)
				}
			}
			slices.SortFunc(cands, func(a, b Record) int {
				return cmp.Or(Priority(r, a)-Priority(r, b), age(a, b))
			})
			if len(cands) == 0 {
				continue
			}
			g := Group{IDs: []string{r.ID}, Count: r.Count}
			for k, q := range cands {
				if k == fanIn-1 || k > 0 && maxEntries > 0 && g.Count+q.Count > maxEntries {
					break
				}
				g.IDs = append(g.IDs, q.ID)
				g.Count += q.Count
				assigned[q.ID] = true
			}
			g.Final = len(g.IDs) == len(c)
			groups = append(groups, g)
		}
	}
	return groups, complete
}

// TestPlanMatchesReference compares Plan with refPlan on random records
// with narrow and wide ranges (so both partner searches run), shared
// bounds, equal creation times and merging records.
func TestPlanMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 29))
	for iter := range 2000 {
		n := rng.IntN(120)
		span := uint64(1 + rng.IntN(400))
		records := make([]Record, n)
		for i := range records {
			lo := rng.Uint64N(span)
			width := rng.Uint64N(span/20 + 1)
			if rng.IntN(4) == 0 {
				width = rng.Uint64N(span)
			}
			records[i] = Record{
				ID:      fmt.Sprintf("r%03d", rng.IntN(1000)*1000+i),
				Min:     board.Position{Occ: lo, Side: board.Color(lo % 2 * uint64(rng.IntN(2)))},
				Max:     board.Position{Occ: lo + width, Side: 1},
				Created: rng.Int64N(int64(n/3 + 1)),
				Count:   rng.Int64N(100),
				Merging: rng.IntN(15) == 0,
			}
			if records[i].Min.Side == 0 && rng.IntN(2) == 0 {
				records[i].Max.Side = 0
			}
		}
		fanIn := rng.IntN(18)
		maxEntries := int64(rng.IntN(2)) * rng.Int64N(500)
		want, wantComplete := refPlan(records, fanIn, maxEntries)
		got, complete := Plan(records, fanIn, maxEntries)
		if complete != wantComplete || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("iteration %d, fanIn %d, maxEntries %d, %d records:\ngot  %v %v\nwant %v %v",
				iter, fanIn, maxEntries, n, got, complete, want, wantComplete)
		}
	}
}

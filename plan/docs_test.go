package plan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPerformancePageShowsThePlan checks the "after" columns of the plan
// to ply 18 in docs/performance.md against the plan the default model
// makes today, so that the page follows the model: transactions an
// edge to two significant digits, segments read, and the cost to the
// cent.
func TestPerformancePageShowsThePlan(t *testing.T) {
	data, err := os.ReadFile("../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Fleet scale")
	if !ok {
		t.Fatal("docs/performance.md has no section on the fleet-scale plan")
	}
	// The section ends at the next of its level: later sections have
	// tables of their own whose rows may start with a ply's number.
	section, _, _ = strings.Cut(section, "\n## ")
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Make(defaultConfig(18))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 6 || !strings.HasPrefix(line, "| 1") {
			continue
		}
		var ply int
		if _, err := fmt.Sscan(cells[0], &ply); err != nil || ply > 18 {
			continue
		}
		rows++
		y := p.Plies[ply]
		perEdge := float64(y.Transactions) / float64(y.Edges)
		var doc float64
		if _, err := fmt.Sscan(cells[2], &doc); err != nil || fmt.Sprintf("%.2g", doc) != fmt.Sprintf("%.2g", perEdge) {
			t.Errorf("ply %d: the page says %s transactions an edge, the plan %.2g", ply, cells[2], perEdge)
		}
		if want := commas(fmt.Sprintf("%.0f", y.Units.Segments)); cells[3] != want {
			t.Errorf("ply %d: the page says %s segments read, the plan %s", ply, cells[3], want)
		}
		if want := commas(fmt.Sprintf("%.2f", y.CostUSD)); cells[5] != want {
			t.Errorf("ply %d: the page says $%s, the plan $%s", ply, cells[5], want)
		}
	}
	if rows != 7 {
		t.Errorf("%d rows for plies 12 to 18 in the page's plan table, want 7", rows)
	}
}

// commas groups the digits of a decimal number's whole part by three.
func commas(s string) string {
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// TestPerformancePageShowsTheMeasuredRuns checks the table of the runs
// to ply 13 in docs/performance.md against the measurements it names in
// plan/testdata: transactions an edge and segments read an edge at plies
// 12 and 13 to two significant digits, all transactions, and the wall
// and CPU seconds.
func TestPerformancePageShowsTheMeasuredRuns(t *testing.T) {
	data, err := os.ReadFile("../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 8 || !strings.Contains(cells[0], "(`measured-") {
			continue
		}
		rows++
		_, file, _ := strings.Cut(cells[0], "(`")
		file, _, _ = strings.Cut(file, "`")
		raw, err := measured.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatalf("the page names %s: %v", file, err)
		}
		m, err := ParseMeasurement(raw)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, p := range m.Plies {
			for _, u := range p.Categories {
				total += u.Transactions()
			}
		}
		want := []string{"", "", "", "", "", commas(fmt.Sprint(total)), fmt.Sprintf("%.0f", m.WallSeconds), fmt.Sprintf("%.0f", m.CPUSeconds)}
		for i, ply := range []int{12, 13} {
			p := m.Plies[ply]
			var tx int64
			for _, u := range p.Categories {
				tx += u.Transactions()
			}
			reads := p.Segments
			if reads == 0 { // measured before segments were recorded
				reads = int64(measuredUnits(m, ply).Segments)
			}
			want[1+i] = fmt.Sprintf("%.2g", float64(tx)/float64(p.Edges))
			want[3+i] = fmt.Sprintf("%.2g", float64(reads)/float64(p.Edges))
		}
		for i := 1; i < len(cells); i++ {
			got := cells[i]
			if i <= 4 {
				var v float64
				if _, err := fmt.Sscan(got, &v); err == nil {
					got = fmt.Sprintf("%.2g", v)
				}
			}
			if got != want[i] {
				t.Errorf("%s, column %d: the page says %s, the measurement %s", file, i+1, cells[i], want[i])
			}
		}
	}
	if rows != 2 {
		t.Errorf("%d rows of measured runs to ply 13 in the page, want 2", rows)
	}
}

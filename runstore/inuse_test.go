package runstore

import "testing"

// TestBlobInUse is the one in-use rule as a table: every kind of blob
// against every state of its ply.
func TestBlobInUse(t *testing.T) {
	final := "p03/f-a.g0.b0.f-0000-x"
	run := "p03/e-0000001-x"
	named := map[string]bool{final: true, run: true}
	ply := func(s State) *Ply { return &Ply{Ply: 3, State: s, Totals: Totals{Finals: 2}} }
	for _, tc := range []struct {
		name string
		p    *Ply
		blob string
		want bool
	}{
		{"no ply record", nil, run, false},
		{"blob of another ply", ply(Merging), "p04/e-0000001-x", false},
		{"not of the layout", ply(Merging), "junk", false},
		{"named run while merging", ply(Merging), run, true},
		{"unnamed run while merging", ply(Merging), "p03/m-a.g0.b0.p-x", false},
		{"named final blob once final", ply(Final), final, true},
		{"unnamed final run once final", ply(Dispatched), "p03/f-b.g0.b0.f-0000-x", false},
		{"splitters while expanding", ply(Expanding), "p03/splitters", true},
		{"splitters once final", ply(Final), "p03/splitters", false},
		{"results of a final blob", ply(Resolved), "p03/r-0000001", true},
		{"results past the last final blob", ply(Resolved), "p03/r-0000002", false},
		{"results before final", ply(Merging), "p03/r-0000000", false},
	} {
		if got := BlobInUse(tc.p, tc.blob, named); got != tc.want {
			t.Errorf("%s: BlobInUse(%s) = %v, want %v", tc.name, tc.blob, got, tc.want)
		}
	}
}

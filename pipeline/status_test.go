package pipeline

import (
	"testing"

	"github.com/reversi-cloud/reversi/runstore"
)

// TestStepPlies: the step under way is on the highest ply not yet Final
// while there is one, and then on the highest not yet Resolved, the
// target ply included while its dispatch still enqueues its resolutions.
func TestStepPlies(t *testing.T) {
	const (
		E = runstore.Expanding
		M = runstore.Merging
		F = runstore.Final
		D = runstore.Dispatched
		R = runstore.Resolved
		C = runstore.Closed
	)
	for _, c := range []struct {
		name            string
		states          []runstore.State // of plies 0, 1, ...
		open, resolving int              // -1: none
	}{
		{"seeded", []runstore.State{M}, 0, -1},
		{"expanding", []runstore.State{D, D, F, E}, 3, -1},
		{"merging", []runstore.State{D, D, D, M}, 3, -1},
		{"the target dispatching its resolutions", []runstore.State{D, D, D, F}, -1, 3},
		{"the target resolving", []runstore.State{D, D, D, D}, -1, 3},
		{"the target resolved, its back stage under way", []runstore.State{D, D, D, R}, -1, 2},
		{"resolving further back", []runstore.State{D, D, C, C}, -1, 1},
		{"ply 0 resolved", []runstore.State{R, C, C, C}, -1, -1},
		{"complete", []runstore.State{C, C, C, C}, -1, -1},
	} {
		var plies []*runstore.Ply
		for i, s := range c.states {
			plies = append(plies, &runstore.Ply{Ply: i, State: s})
		}
		open, resolving := stepPlies(plies)
		if got := plyNumber(open); got != c.open {
			t.Errorf("%s: open ply %d, want %d", c.name, got, c.open)
		}
		if got := plyNumber(resolving); got != c.resolving {
			t.Errorf("%s: resolving ply %d, want %d", c.name, got, c.resolving)
		}
	}
}

func plyNumber(p *runstore.Ply) int {
	if p == nil {
		return -1
	}
	return p.Ply
}

package runstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/storage"
)

func openStore(t *testing.T) (*Store, storage.Table) {
	t.Helper()
	be := testkit.Embedded(t)
	ctx := context.Background()
	state, back := be.Table("runstate"), be.Table("runback")
	for _, tb := range []storage.Table{state, back} {
		if err := tb.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return New(board.MustNew(4), []storage.Table{state}, []storage.Table{back}, 1), state
}

// transitions lists the ply lifecycle's transitions by the state they
// lead to.
var transitions = map[State]func(s *Store, ctx context.Context, p *Ply) error{
	Merging: func(s *Store, ctx context.Context, p *Ply) error { return s.StartMerging(ctx, p, "m") },
	Final: func(s *Store, ctx context.Context, p *Ply) error {
		return s.Finish(ctx, p, "f", Totals{Finals: 2}, nil)
	},
	Dispatched: func(s *Store, ctx context.Context, p *Ply) error { return s.MarkDispatched(ctx, p) },
	Resolved:   func(s *Store, ctx context.Context, p *Ply) error { return s.Resolve(ctx, p, "r", Counts{White: 3}) },
	Closed:     func(s *Store, ctx context.Context, p *Ply) error { return s.Close(ctx, p) },
}

// TestLifecycle walks a ply through every state, and from every state
// tries every transition: only the next state is allowed, the others are
// ErrIllegalTransition and change nothing; a transition from a stale copy
// is ErrConflict.
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	p, err := s.AddFirstPly(ctx, "seed")
	if err != nil {
		t.Fatal(err)
	}
	// AddFirstPly is idempotent: the second call reads the record back.
	if again, err := s.AddFirstPly(ctx, "other"); err != nil || again.Owner != "seed" || again.State != Merging {
		t.Fatalf("second AddFirstPly: %+v, %v", again, err)
	}
	// Ply 0 starts Merging; put a ply 1 through the whole cycle instead,
	// added by ply 0's Finish as the flow does.
	next := &Ply{Ply: 1, Tasks: 7}
	if err := s.Finish(ctx, p, "seed", Totals{Finals: 1, Positions: 1}, next); err != nil {
		t.Fatal(err)
	}
	one, err := s.Ply(ctx, 1)
	if err != nil || one.State != Expanding || one.Tasks != 7 {
		t.Fatalf("ply 1 after ply 0's Finish: %+v, %v", one, err)
	}
	for state := Expanding; state <= Closed; state++ {
		if one.State != state {
			t.Fatalf("state %s, want %s", one.State, state)
		}
		for to, move := range transitions {
			if to == state+1 {
				continue
			}
			before := *one
			if err := move(s, ctx, one); !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("%s -> %s: %v, want ErrIllegalTransition", state, to, err)
			}
			if *one != before {
				t.Errorf("%s -> %s: the refused transition changed the record to %+v", state, to, *one)
			}
		}
		if state == Closed {
			break
		}
		stale := *one
		if err := transitions[state+1](s, ctx, one); err != nil {
			t.Fatalf("%s -> %s: %v", state, state+1, err)
		}
		if err := transitions[state+1](s, ctx, &stale); !errors.Is(err, ErrConflict) {
			t.Errorf("%s -> %s from a stale copy: %v, want ErrConflict", state, state+1, err)
		}
		stored, err := s.Ply(ctx, 1)
		if err != nil || *stored != *one {
			t.Fatalf("stored %+v (%v), want %+v", stored, err, one)
		}
	}
	if one.Owner != "r" || one.White != 3 || one.Finals != 2 {
		t.Errorf("closed ply %+v: owner, counts or totals lost", one)
	}
}

// TestMalformedRows checks that a missing or mistyped property is an
// error naming it, never a silent zero.
func TestMalformedRows(t *testing.T) {
	ctx := context.Background()
	s, state := openStore(t)
	if _, err := s.AddFirstPly(ctx, "seed"); err != nil {
		t.Fatal(err)
	}
	e, err := state.Get(ctx, pkPlies, rkPly(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(map[string]any)
	}{
		{"missing", func(p map[string]any) { delete(p, "Positions") }},
		{"mistyped", func(p map[string]any) { p["Positions"] = "many" }},
		{"negative count", func(p map[string]any) { p["Tasks"] = int64(-1) }},
		{"unknown state", func(p map[string]any) { p["State"] = "sleeping" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := storage.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Props: map[string]any{}}
			for k, v := range e.Props {
				bad.Props[k] = v
			}
			tc.spoil(bad.Props)
			if _, err := state.Upsert(ctx, bad); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Ply(ctx, 0); !errors.Is(err, ErrMalformed) {
				t.Errorf("reading the spoiled ply: %v, want ErrMalformed", err)
			}
		})
	}
}

// TestPlyRecordVersions: a ply record is written with plySchema's
// version and reads back whole; a record written before records had a
// version (no Version) reads as it always did, and one written before
// combine levels existed (no Groups, Ranges or Combines either) reads as
// a ply merged in one level; a record of a version this release does not
// know is refused in one line that says what to do, and a version no
// release writes is malformed or refused.
func TestPlyRecordVersions(t *testing.T) {
	p := &Ply{Ply: 5, State: Merging, Owner: "o", Tasks: 9, Buckets: 4, Groups: 2, Ranges: 2,
		Totals: Totals{Finals: 3, Positions: 7, Combines: 4}, Counts: Counts{Draws: 1}}
	if v, err := storage.PropInt64(p.entity(), "Version"); err != nil || v != int64(plySchema.version()) {
		t.Errorf("the record's version is %d, %v; want %d", v, err, plySchema.version())
	}
	oneLevel := *p
	oneLevel.Groups, oneLevel.Ranges, oneLevel.Combines = 0, 0, 0
	for _, tc := range []struct {
		name    string
		without []string
		want    *Ply
	}{
		{"this release's", nil, p},
		{"the last release without versions", []string{"Version"}, p},
		{"before combine levels", []string{"Version", "Groups", "Ranges", "Combines"}, &oneLevel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := p.entity()
			for _, n := range tc.without {
				delete(e.Props, n)
			}
			got, err := decodePly(e)
			if err != nil || *got != *tc.want {
				t.Errorf("read %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name      string
		version   any
		malformed bool
		mention   []string
	}{
		{"a later version", int64(plySchema.version() + 1), false, []string{"ply 5 record is version 2", "use the release that wrote it"}},
		{"version zero written down", int64(0), false, []string{"version 0"}},
		{"a version of the wrong type", "1", true, []string{"ply 5 record", "Version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := p.entity()
			e.Props["Version"] = tc.version
			_, err := decodePly(e)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrMalformed) != tc.malformed {
				t.Errorf("%v: malformed %v, want %v", err, !tc.malformed, tc.malformed)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: want one line", err)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q: want a mention of %q", err, m)
				}
			}
		})
	}
}

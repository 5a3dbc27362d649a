package runstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/teststore"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/storage"
)

func openStore(t *testing.T) (*Store, storage.Table) {
	t.Helper()
	be := teststore.Embedded(t)
	ctx := context.Background()
	state, back := be.Table("runstate"), be.Table("runback")
	for _, tb := range []storage.Table{state, back} {
		if err := tb.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return New(board.MustNew(4), []storage.Table{state}, []storage.Table{back}, 1, TreeCompletion), state
}

// TestMalformedRows checks that a missing or mistyped property is an
// error naming it, never a silent zero.
func TestMalformedRows(t *testing.T) {
	ctx := context.Background()
	s, state := openStore(t)
	if _, err := s.AddFirstPly(ctx, Claim{Owner: "seed"}); err != nil {
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
// a ply merged in one level, and one of version 1 or before as a ply
// that kept every position's backtracking rows, and one of version 2 or
// before as one whose owner holds no lease, and one of version 4 or
// before as one whose merges test each position for the end of the game
// (RefsMarkTerminal false); a record of a version this release does not
// know is refused in one line that says what to do, and a version no
// release writes is malformed or refused.
func TestPlyRecordVersions(t *testing.T) {
	p := &Ply{Ply: 5, State: Merging, Owner: "o", Until: time.Unix(0, 1_700_000_000_000_000_000), Tasks: 9, Buckets: 4, Levels: []CombineLevel{{3, 2}, {2, 3}}, TerminalSources: true,
		RefsMarkTerminal: true, Totals: Totals{Finals: 3, Positions: 7, Combines: 4}, Counts: Counts{Draws: 1}}
	if v, err := storage.PropInt64(p.entity(), "Version"); err != nil || v != int64(plySchema.version()) {
		t.Errorf("the record's version is %d, %v; want %d", v, err, plySchema.version())
	}
	tested := *p // a record of version 4 or before: its merges tested terminal positions
	tested.RefsMarkTerminal = false
	oneUp := tested // a record of version 3 or before holds one level at most
	oneUp.Levels = p.Levels[:1]
	noLease := oneUp
	noLease.Until = time.Time{}
	allSources := noLease
	allSources.TerminalSources = false
	oneLevel := allSources
	oneLevel.Levels, oneLevel.Combines = nil, 0
	for _, tc := range []struct {
		name    string
		version int64 // written instead of this release's, if not 0
		without []string
		want    *Ply
	}{
		{"this release's", 0, nil, p},
		{"the last release without versions", 0, []string{"Version", "TerminalSources", "Until", "Upper", "RefsMarkTerminal"}, &allSources},
		{"version 1", 1, []string{"TerminalSources", "Until", "Upper", "RefsMarkTerminal"}, &allSources},
		{"version 2", 2, []string{"Until", "Upper", "RefsMarkTerminal"}, &noLease},
		{"version 3", 3, []string{"Upper", "RefsMarkTerminal"}, &oneUp},
		{"version 4", 4, []string{"RefsMarkTerminal"}, &tested},
		{"before combine levels", 0, []string{"Version", "Groups", "Ranges", "Combines", "TerminalSources", "Until", "Upper", "RefsMarkTerminal"}, &oneLevel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := p.entity()
			if tc.version != 0 {
				e.Props["Version"] = tc.version
			}
			for _, n := range tc.without {
				delete(e.Props, n)
			}
			got, err := decodePly(e)
			if err != nil || !reflect.DeepEqual(*got, *tc.want) {
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
		{"a later version", int64(plySchema.version() + 1), false, []string{fmt.Sprintf("ply 5 record is version %d", plySchema.version()+1), "use the release that wrote it"}},
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

// TestRunRefs: how a ply's expansion runs name a parent, and what the
// merges read back from the refs: the parent itself, and whether a
// position is terminal where the refs tell it. Parent (0, 0) is the
// case that made Ref{} ambiguous before RefsMarkTerminal.
func TestRunRefs(t *testing.T) {
	parents := []packed.Ref{{}, {Blob: 0, Index: 7}, {Blob: 3, Index: 0}, {Blob: 3, Index: 9}}
	for _, tc := range []struct {
		name  string
		ply   Ply
		shift uint32 // added to a kept parent's index
		tells bool
	}{
		{"every parent", Ply{}, 0, false},
		{"every parent, marked", Ply{RefsMarkTerminal: true}, 0, false},
		{"terminal parents, tested", Ply{TerminalSources: true}, 0, false},
		{"terminal parents, marked", Ply{TerminalSources: true, RefsMarkTerminal: true}, 1, true},
	} {
		for _, terminal := range []bool{false, true} {
			var refs []packed.Ref
			for _, parent := range parents {
				got := tc.ply.RunRef(parent, terminal)
				want := parent
				want.Index += tc.shift
				if !tc.ply.KeepsSources(terminal) {
					want = packed.Ref{}
				}
				if got != want {
					t.Errorf("%s, terminal %v: RunRef(%v) = %v, want %v", tc.name, terminal, parent, got, want)
				}
				if tc.ply.KeepsSources(terminal) {
					if back := tc.ply.ParentOf(got); back != parent {
						t.Errorf("%s: ParentOf(%v) = %v, want %v", tc.name, got, back, parent)
					}
				}
				refs = append(refs, got)
			}
			for _, rs := range [][]packed.Ref{refs[:1], refs[1:], refs} {
				if !tc.ply.KeepsSources(terminal) {
					rs = refs[:1] // the merges drop the equal Ref{}s
				}
				end, known := tc.ply.TerminalByRefs(rs)
				if known != tc.tells || known && end != terminal {
					t.Errorf("%s: TerminalByRefs(%v) = %v, %v; the position is terminal: %v", tc.name, rs, end, known, terminal)
				}
			}
		}
	}
}

// TestKeepsSources: every position keeps backtracking rows, unless the
// ply keeps them for its terminal positions only.
func TestKeepsSources(t *testing.T) {
	for _, tc := range []struct{ terminalSources, terminal, want bool }{
		{false, false, true}, {false, true, true}, {true, false, false}, {true, true, true},
	} {
		p := &Ply{TerminalSources: tc.terminalSources}
		if got := p.KeepsSources(tc.terminal); got != tc.want {
			t.Errorf("TerminalSources %v, terminal %v: %v, want %v", tc.terminalSources, tc.terminal, got, tc.want)
		}
	}
}

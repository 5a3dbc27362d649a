package runstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// solving is a run's settings with every field set, on an unusual start.
func solving(t *testing.T) Config {
	t.Helper()
	start, err := board.MustNew(8).ParseMoves("f5d6")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Board: 8, Target: 9, Sizes: Sizes{BlobPositions: 100, BucketBlobs: 4, GrowFrom: 7, MergeFanIn: 32},
		Start: start, Solve: true, SolvePositions: 16, SolveMode: SolveRoot,
		QueueShards: 2, CompensationShards: 5, PartitionShards: 3, Accounts: 4, StateAccounts: 4, Completion: FlatCompletion,
		Messages: MessagesScanNodes}
}

// readRow writes row as a run's settings and reads it back.
func readRow(t *testing.T, row storage.Entity) (Config, error) {
	t.Helper()
	ctx := context.Background()
	_, state := openStore(t)
	if _, err := state.Add(ctx, row); err != nil {
		t.Fatal(err)
	}
	return ReadConfig(ctx, state)
}

// row is the settings row of c as this release writes it, without the
// named properties.
func row(t *testing.T, c Config, without ...string) storage.Entity {
	t.Helper()
	e, err := c.entity(time.Unix(0, 7))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range without {
		delete(e.Props, name)
	}
	return e
}

// TestConfigRoundTrip: settings with every field set read back as
// written, in a row of configSchema's version; a field added to Config but not to
// its row fails here, and so does the usual start recorded as anything
// but "".
func TestConfigRoundTrip(t *testing.T) {
	full := solving(t)
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("the test's settings leave %s zero: set every field, so that each is seen to be recorded", v.Type().Field(i).Name)
		}
	}
	usual := Config{Board: 6, Target: 5, Sizes: Sizes{BlobPositions: 100, BucketBlobs: 4},
		Start: board.MustNew(6).Start(), QueueShards: 1, CompensationShards: 1, PartitionShards: 1, Accounts: 1, StateAccounts: 1,
		Completion: TreeCompletion, Messages: MessagesUnnamed}
	for _, c := range []Config{full, usual} {
		e := row(t, c)
		if got, err := storage.PropInt64(e, "Version"); err != nil || got != int64(configSchema.version()) {
			t.Errorf("the row's version is %d, %v; want %d", got, err, configSchema.version())
		}
		got, err := readRow(t, e)
		if err != nil || got != c {
			t.Errorf("read %+v, %v; want %+v", got, err, c)
		}
	}
	if start := row(t, usual).Props["Start"]; start != "" {
		t.Errorf("the usual start is recorded as %q, want \"\"", start)
	}
	usual.Completion = ""
	if c := row(t, usual).Props["Completion"]; c != string(TreeCompletion) {
		t.Errorf("no completion is recorded as %q, want %q", c, TreeCompletion)
	}
}

// TestReadConfigOfOlderRuns reads settings rows as runs seeded by earlier
// releases wrote them: versions 4 to 1, and version 0, without a version, which
// is six generations, each lacking the properties that later ones added;
// each reads with the values that keep such a run as it was seeded. Each
// generation here lacks its own properties and every later one's, as it
// was written, and writes its values where a later one changed what they
// mean. Versions 4 to 2 count their stages in a tree of 64, the others
// flat.
func TestReadConfigOfOlderRuns(t *testing.T) {
	full := solving(t)
	full.Completion = TreeCompletion
	usualStart := board.MustNew(8).Start()
	// Each generation lacks the properties of the entries above it, and
	// the row reads as the entry's want changes full.
	generations := []struct {
		name    string
		version int64 // of the row, while it has one
		lacks   []string
		writes  map[string]any
		want    func(c *Config)
	}{
		{"version 4", 4, nil, map[string]any{"Completion": ""}, func(c *Config) { c.Completion = WideTreeCompletion }},
		{"version 3", 3, []string{"Messages"}, nil, func(c *Config) { c.Messages = MessagesUnnamed }},
		{"version 2", 2, []string{"CompensationShards"}, nil, func(c *Config) { c.CompensationShards = 1 }},
		{"version 1", 1, []string{"Completion"}, nil, func(c *Config) { c.Completion = FlatCompletion }},
		{"the last release without versions", 0, []string{"Version"}, nil, func(c *Config) {}},
		{"before growing sizes", 0, []string{"GrowFrom", "MergeFanIn"}, nil, func(c *Config) { c.GrowFrom, c.MergeFanIn = 0, 0 }},
		{"before spread state rows", 0, []string{"StateAccounts"}, nil, func(c *Config) { c.StateAccounts = 1 }},
		{"before sharding", 0, []string{"QueueShards", "PartitionShards", "Accounts"}, nil, func(c *Config) {
			c.QueueShards, c.PartitionShards, c.Accounts = 1, 1, 1
		}},
		{"before solve modes", 0, []string{"SolveMode"}, nil, func(c *Config) { c.SolveMode = SolveAll }},
		{"before solve positions", 0, []string{"SolvePositions"}, nil, func(c *Config) { c.SolvePositions = c.BlobPositions }},
		{"before -start and -solve", 0, []string{"Start", "Solve"}, nil, func(c *Config) {
			c.Start, c.Solve, c.SolvePositions, c.SolveMode = usualStart, false, 0, ""
		}},
	}
	var lacks []string
	writes := map[string]any{}
	want := full
	for _, g := range generations {
		lacks = append(lacks, g.lacks...)
		maps.Copy(writes, g.writes)
		g.want(&want)
		t.Run(g.name, func(t *testing.T) {
			e := row(t, full, lacks...)
			for name, v := range writes {
				if _, ok := e.Props[name]; ok {
					e.Props[name] = v
				}
			}
			if _, ok := e.Props["Version"]; ok {
				e.Props["Version"] = g.version
			}
			got, err := readRow(t, e)
			if err != nil || got != want {
				t.Errorf("read %+v, %v; want %+v", got, err, want)
			}
		})
	}
	// A generation's gap is filled on its own, whatever else the row
	// has: a run that does not solve keeps no solve positions.
	t.Run("before solve positions, not solving", func(t *testing.T) {
		c := full
		c.Solve, c.SolvePositions, c.SolveMode, c.Completion, c.CompensationShards, c.Messages = false, 0, "", FlatCompletion, 1, MessagesUnnamed
		got, err := readRow(t, row(t, c, "Version", "SolvePositions"))
		if err != nil || got != c {
			t.Errorf("read %+v, %v; want %+v", got, err, c)
		}
	})
}

// TestReadConfigRefuses: a row of a version this release does not know
// is refused in one line that names the version, and a row no release
// could have written is malformed.
func TestReadConfigRefuses(t *testing.T) {
	full := solving(t)
	for _, tc := range []struct {
		name      string
		spoil     func(props map[string]any)
		malformed bool
		mention   string
	}{
		{"a later version", func(p map[string]any) { p["Version"] = int64(configSchema.version() + 1) }, false, fmt.Sprint("version ", configSchema.version()+1)},
		{"no such messages", func(p map[string]any) { p["Messages"] = int64(4) }, true, "messages 4"},
		{"no such completion", func(p map[string]any) { p["Completion"] = "round" }, true, "completion"},
		{"version zero written down", func(p map[string]any) { p["Version"] = int64(0) }, false, "version 0"},
		{"a version of the wrong type", func(p map[string]any) { p["Version"] = "1" }, true, "Version"},
		{"no board", func(p map[string]any) { delete(p, "Board") }, true, "Board"},
		{"a board of no size", func(p map[string]any) { p["Board"] = int64(5) }, true, "board 5"},
		{"a bad start", func(p map[string]any) { p["Start"] = "not a position" }, true, "start position"},
		{"an unversioned row of the wrong type", func(p map[string]any) { delete(p, "Version"); p["Solve"] = "yes" }, true, "Solve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := row(t, full)
			tc.spoil(e.Props)
			_, err := readRow(t, e)
			switch {
			case err == nil:
				t.Fatal("no error")
			case errors.Is(err, ErrMalformed) != tc.malformed:
				t.Errorf("%v: malformed %v, want %v", err, !tc.malformed, tc.malformed)
			case strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tc.mention):
				t.Errorf("%q: want one line that mentions %q", err, tc.mention)
			}
		})
	}
}

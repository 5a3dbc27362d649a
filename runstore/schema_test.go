package runstore

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// TestSchemaUpgrade: a row is migrated from its version to the schema's,
// each migration in turn and only those after its version; the row read
// is a copy, so the caller's entity is untouched; a migration that fails
// makes the row malformed, naming the row and the version it failed on.
func TestSchemaUpgrade(t *testing.T) {
	// Each version appends its number to the row's History.
	appendVersion := func(v string) func(map[string]any) error {
		return func(p map[string]any) error {
			h, _ := p["History"].(string)
			p["History"] = h + v
			return nil
		}
	}
	s := schema{0: appendVersion("1"), 1: appendVersion("2"), 2: appendVersion("3")}
	for _, tc := range []struct {
		name    string
		version any // nil: no Version property
		want    string
	}{
		{"unversioned", nil, "123"},
		{"version 1", int64(1), "23"},
		{"version 2", int64(2), "3"},
		{"the schema's version", int64(3), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storage.Entity{Props: map[string]any{"History": ""}}
			if tc.version != nil {
				e.Props["Version"] = tc.version
			}
			before := map[string]any{}
			for k, v := range e.Props {
				before[k] = v
			}
			got, err := s.upgrade(e, "the test row")
			if err != nil || got.Props["History"] != tc.want {
				t.Errorf("history %q, %v; want %q", got.Props["History"], err, tc.want)
			}
			if !reflect.DeepEqual(e.Props, before) {
				t.Errorf("upgrade changed the caller's row to %v", e.Props)
			}
		})
	}
	s[1] = func(map[string]any) error { return errors.New("no way") }
	_, err := s.upgrade(storage.Entity{Props: map[string]any{"Version": int64(1)}}, "the test row")
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "the test row of version 1") {
		t.Errorf("a failed migration: %v; want ErrMalformed naming the row and version 1", err)
	}
	if got := s.stamp(map[string]any{})["Version"]; got != int64(3) {
		t.Errorf("stamped version %v, want 3", got)
	}
}

package runstore

import (
	"fmt"

	"github.com/reversi-cloud/reversi/storage"
)

// schema is the version of one kind of row, and the migrations that bring
// a row of an older version to it. A row records its version in the
// property Version so that a reader knows which migrations it needs, and
// refuses a row of a later version instead of misreading it. Rows
// written before their kind had a version lack the property: they are
// version 0.
//
// schema[v] rewrites the properties of a row of version v as version v+1
// writes them, with the values that keep the row meaning what it meant;
// upgrade applies them in turn, so each migration is written once,
// against the version it upgrades, and never changes after. The version
// this code writes is the number of migrations: a new version is one
// more migration, and nothing else to keep in step.
//
// Older code reads a row of a later version too when it ignores the
// Version property, as every release so far does. A change that older
// code would misread needs more than a new version (a new row, say).
type schema []func(props map[string]any) error

// version is the version of the rows this code writes.
func (s schema) version() int { return len(s) }

// stamp records in props that the row is of s.version.
func (s schema) stamp(props map[string]any) map[string]any {
	props["Version"] = int64(s.version())
	return props
}

// upgrade returns a copy of e, the row named row in errors ("the run's
// settings row"), whose properties are those of a row of s.version,
// migrated from e's version; e itself is not changed. A row of a version
// this code does not know is refused in one line that says what to do;
// a Version property of the wrong type is ErrMalformed.
func (s schema) upgrade(e storage.Entity, row string) (storage.Entity, error) {
	props := make(map[string]any, len(e.Props)+1)
	for k, v := range e.Props {
		props[k] = v
	}
	e.Props = props
	version := 0
	if _, ok := props["Version"]; ok {
		v, err := storage.PropInt64(e, "Version")
		if err != nil {
			return storage.Entity{}, fmt.Errorf("decoding %s: %w: %w", row, ErrMalformed, err)
		}
		// Version 0 is never written down: a row without the property
		// is older than versions, and a row with 0 no release wrote.
		if v < 1 || v > int64(s.version()) {
			return storage.Entity{}, fmt.Errorf("%s is version %d, which this release does not know (it reads versions up to %d): use the release that wrote it, or a later one", row, v, s.version())
		}
		version = int(v)
	}
	for ; version < s.version(); version++ {
		if err := s[version](props); err != nil {
			return storage.Entity{}, fmt.Errorf("decoding %s of version %d: %w: %w", row, version, ErrMalformed, err)
		}
	}
	return e, nil
}

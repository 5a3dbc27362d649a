package runstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// ErrMalformed marks a row that is missing a property or holds one of the
// wrong type or value. It never heals on retry.
var ErrMalformed = errors.New("runstore: malformed row")

// decoder reads the properties of one row and keeps the first error, so a
// row's decoding reads as a list of fields and is checked once at the end.
type decoder struct {
	e   storage.Entity
	b   *board.Board
	err error
}

func decode(e storage.Entity, b *board.Board) *decoder { return &decoder{e: e, b: b} }

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %w", ErrMalformed, err)
	}
}

func (d *decoder) int(name string) int64 {
	v, err := storage.PropInt64(d.e, name)
	if err != nil {
		d.fail(err)
	}
	return v
}

// count is a non-negative int property that fits an int.
func (d *decoder) count(name string) int {
	v := d.int(name)
	if v < 0 || v > 1<<40 {
		d.fail(fmt.Errorf("row (%q, %q) property %q is %d, out of range", d.e.PartitionKey, d.e.RowKey, name, v))
		return 0
	}
	return int(v)
}

func (d *decoder) str(name string) string {
	v, err := storage.PropString(d.e, name)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *decoder) bool(name string) bool {
	v, err := storage.PropBool(d.e, name)
	if err != nil {
		d.fail(err)
	}
	return v
}

// optional reports whether a property that rows written before it
// existed lack is present.
func (d *decoder) optional(name string) bool {
	_, ok := d.e.Props[name]
	return ok
}

// cuts reads a property written by encodeCuts.
func (d *decoder) cuts(name string) Cuts {
	c, err := decodeCuts(d.bytes(name))
	if err != nil {
		d.fail(err)
	}
	return c
}

func (d *decoder) bytes(name string) []byte {
	v, err := storage.PropBytes(d.e, name)
	if err != nil {
		d.fail(err)
	}
	return v
}

// optBytes is a binary property that may be absent.
func (d *decoder) optBytes(name string) []byte {
	if !d.optional(name) {
		return nil
	}
	return d.bytes(name)
}

func (d *decoder) position(name string) board.Position {
	k := d.bytes(name)
	if d.err != nil {
		return board.Position{}
	}
	p, err := d.b.DecodeKey(k)
	if err != nil {
		d.fail(fmt.Errorf("row (%q, %q) property %q: %w", d.e.PartitionKey, d.e.RowKey, name, err))
	}
	return p
}

// keyIndex reads the row key as prefix followed by an index (keys.go).
func (d *decoder) keyIndex(prefix string) int {
	k := d.e.RowKey
	if rest, ok := strings.CutPrefix(k, prefix); ok {
		if n, ok := parseIndex(rest, indexWidth); ok {
			return n
		}
	}
	d.fail(fmt.Errorf("row key %q is not %s<index>", k, prefix))
	return 0
}

func (d *decoder) done(what string) error {
	if d.err != nil {
		return fmt.Errorf("decoding %s: %w", what, d.err)
	}
	return nil
}

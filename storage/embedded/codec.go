package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Stored values are built from uvarints, varints and length-prefixed
// byte strings; this file holds the few helpers they share.

// errCorrupt reports a stored value that does not decode.
var errCorrupt = errors.New("embedded: corrupt stored value")

// reader decodes a stored value; the first failure sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes returns a length-prefixed byte string, aliasing the value.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func appendBytes(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// Property types in an encoded entity.
const (
	propString = 's'
	propBinary = 'y'
	propInt    = 'i'
	propBool   = 'b'
)

// encodeEntity encodes an entity's ETag ID and properties. The caller has
// validated the properties, so each is of a known type.
func encodeEntity(etag uint64, props map[string]any) []byte {
	dst := binary.AppendUvarint(make([]byte, 0, 64), etag)
	dst = binary.AppendUvarint(dst, uint64(len(props)))
	for name, v := range props {
		dst = appendBytes(dst, name)
		switch v := v.(type) {
		case string:
			dst = appendBytes(append(dst, propString), v)
		case []byte:
			dst = appendBytes(append(dst, propBinary), string(v))
		case int64:
			dst = binary.AppendVarint(append(dst, propInt), v)
		case bool:
			c := byte(0)
			if v {
				c = 1
			}
			dst = append(dst, propBool, c)
		}
	}
	return dst
}

// entityETag decodes only the ETag ID of an encoded entity.
func entityETag(v []byte) (uint64, error) {
	r := reader{b: v}
	etag := r.uvarint()
	return etag, r.err
}

// decodeEntity decodes an encoded entity into fresh memory. The names and
// string values share one string made from the whole value: one
// allocation instead of one per property.
func decodeEntity(v []byte) (uint64, map[string]any, error) {
	r := reader{b: v}
	etag := r.uvarint()
	n := r.uvarint()
	if n > uint64(len(v)) {
		return 0, nil, errCorrupt
	}
	all := string(v)
	str := func(b []byte) string {
		off := len(v) - len(r.b) - len(b) // b ends where r.b starts
		return all[off : off+len(b)]
	}
	props := make(map[string]any, n)
	for range n {
		name := str(r.bytes())
		switch t := r.byte(); t {
		case propString:
			props[name] = str(r.bytes())
		case propBinary:
			props[name] = append([]byte{}, r.bytes()...) // non-nil even if empty
		case propInt:
			props[name] = r.varint()
		case propBool:
			props[name] = r.byte() == 1
		default:
			if r.err == nil {
				r.err = fmt.Errorf("%w: property type %q", errCorrupt, t)
			}
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errCorrupt
	}
	return etag, props, r.err
}

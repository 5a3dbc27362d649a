package azure

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
)

// encodeEntity writes the JSON body of an insert or replace: int64 as an
// Edm.Int64 string (JSON numbers lose precision past 2^53), []byte as
// Edm.Binary base64. Properties come in name order.
func encodeEntity(e storage.Entity) []byte {
	var b bytes.Buffer
	b.WriteString(`{"PartitionKey":`)
	writeJSONString(&b, e.PartitionKey)
	b.WriteString(`,"RowKey":`)
	writeJSONString(&b, e.RowKey)
	names := make([]string, 0, len(e.Props))
	for name := range e.Props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.WriteByte(',')
		switch v := e.Props[name].(type) {
		case string:
			writeJSONString(&b, name)
			b.WriteByte(':')
			writeJSONString(&b, v)
		case int64:
			writeJSONString(&b, name+"@odata.type")
			b.WriteString(`:"Edm.Int64",`)
			writeJSONString(&b, name)
			b.WriteString(`:"` + strconv.FormatInt(v, 10) + `"`)
		case bool:
			writeJSONString(&b, name)
			b.WriteString(":" + strconv.FormatBool(v))
		case []byte:
			writeJSONString(&b, name+"@odata.type")
			b.WriteString(`:"Edm.Binary",`)
			writeJSONString(&b, name)
			b.WriteString(`:"` + base64.StdEncoding.EncodeToString(v) + `"`)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // valid UTF-8 checked before; never fails
	b.Write(enc)
}

// decodeEntity reads one entity of a minimal-metadata response. Types the
// service infers without an annotation (string, bool, Int32) need none;
// Edm.Int64 and Edm.Binary come annotated. Other EDM types, which this
// project never writes, are returned as their JSON text.
func decodeEntity(raw map[string]json.RawMessage) (storage.Entity, error) {
	e := storage.Entity{Props: map[string]any{}}
	types := map[string]string{}
	for k, v := range raw {
		if name, ok := strings.CutSuffix(k, "@odata.type"); ok {
			var t string
			if err := json.Unmarshal(v, &t); err != nil {
				return e, fmt.Errorf("entity: bad type annotation of %q", name)
			}
			types[name] = t
		}
	}
	for k, v := range raw {
		switch {
		case strings.HasPrefix(k, "odata."):
			if k == "odata.etag" {
				_ = json.Unmarshal(v, &e.ETag)
			}
			continue
		case strings.Contains(k, "@"):
			continue
		case k == "Timestamp":
			continue
		case k == "PartitionKey":
			if err := json.Unmarshal(v, &e.PartitionKey); err != nil {
				return e, fmt.Errorf("entity: bad PartitionKey")
			}
			continue
		case k == "RowKey":
			if err := json.Unmarshal(v, &e.RowKey); err != nil {
				return e, fmt.Errorf("entity: bad RowKey")
			}
			continue
		}
		val, err := decodeValue(types[k], v)
		if err != nil {
			return e, fmt.Errorf("entity: property %q: %v", k, err)
		}
		e.Props[k] = val
	}
	return e, nil
}

func decodeValue(typ string, v json.RawMessage) (any, error) {
	switch typ {
	case "Edm.Int64":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			// Some emulators write Int64 as a bare number.
			var n json.Number
			if err := json.Unmarshal(v, &n); err != nil {
				return nil, err
			}
			s = n.String()
		}
		return strconv.ParseInt(s, 10, 64)
	case "Edm.Binary":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		if b == nil {
			b = []byte{}
		}
		return b, nil
	case "", "Edm.String", "Edm.Boolean", "Edm.Int32":
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			return nil, err
		}
		switch x := x.(type) {
		case string, bool:
			return x, nil
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n, nil
			}
			return x.String(), nil
		case nil:
			return nil, fmt.Errorf("null value")
		}
		return string(v), nil
	default:
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s, nil
		}
		return string(v), nil
	}
}

// sameProps reports whether an entity read back holds exactly want.
func sameProps(want, got map[string]any) bool {
	if len(want) != len(got) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		switch w := w.(type) {
		case []byte:
			gb, ok := g.([]byte)
			if !ok || !bytes.Equal(w, gb) {
				return false
			}
		default:
			if w != g {
				return false
			}
		}
	}
	return true
}

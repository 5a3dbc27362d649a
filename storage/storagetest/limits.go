package storagetest

import (
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/storage"
)

// chunk is the longest string property in characters of one UTF-16 unit:
// MaxPropertyBytes in UTF-16.
const chunk = storage.MaxPropertyBytes / 2

// numbered returns n properties named prefix0, prefix1, ... made by v.
func numbered(prefix string, n int, v func(i int) any) map[string]any {
	props := make(map[string]any, n)
	for i := range n {
		props[fmt.Sprintf("%s%d", prefix, i)] = v(i)
	}
	return props
}

// sizedEntity returns an entity whose EntitySize is exactly size: strings
// at their limit and a binary to make up the rest. The strings are ASCII,
// which EntitySize counts twice (UTF-16) and JSON once, because Azurite
// refuses a replace whose JSON body exceeds 1 MiB.
func sizedEntity(e *env, pk, rk string, size int) storage.Entity {
	e.Helper()
	ent := ent(pk, rk, numbered("S", 15, func(int) any { return strings.Repeat("x", chunk) }))
	ent.Props["Pad"] = []byte{}
	pad := size - storage.EntitySize(ent)
	if pad < 0 || pad > storage.MaxPropertyBytes {
		e.Fatalf("no entity of %d bytes from 15 full strings and a pad of %d", size, pad)
	}
	ent.Props["Pad"] = make([]byte, pad)
	return ent
}

// testTableEntityLimits writes entities exactly at each of Azure's
// per-entity limits, which every write path must accept, and one unit
// over, which every write path must refuse with ErrInvalid before it
// changes anything.
func testTableEntityLimits(e *env) {
	t := e.table(e.b, "entlimits")
	str := func(s string, n int) map[string]any { return map[string]any{"S": strings.Repeat(s, n)} }
	for i, tc := range []struct {
		what     string
		at, over map[string]any
	}{
		{"binary property", map[string]any{"B": make([]byte, storage.MaxPropertyBytes)},
			map[string]any{"B": make([]byte, storage.MaxPropertyBytes+1)}},
		// Strings are measured in UTF-16: 32 KiB of ASCII is at the limit.
		// (Texts at the limit are ASCII because Azurite 3.35 garbles
		// multi-byte characters that straddle a read of a large request
		// body, Azure/Azurite#2670; TestValidEntity covers the others.)
		{"string property", str("s", chunk), str("s", chunk+1)},
		{"property count", numbered("P", storage.MaxProperties, func(i int) any { return int64(i) }),
			numbered("P", storage.MaxProperties+1, func(i int) any { return int64(i) })},
		{"entity size", sizedEntity(e, "p", "r", storage.MaxEntityBytes).Props,
			sizedEntity(e, "p", "r", storage.MaxEntityBytes+1).Props},
	} {
		rk := string(rune('a' + i)) // one character, as sizedEntity assumes
		at := ent("p", rk, tc.at)
		_, err := t.Add(e.ctx, at)
		e.must(err, "add at the "+tc.what+" limit")
		_, err = t.Upsert(e.ctx, at)
		e.must(err, "upsert at the "+tc.what+" limit")
		_, err = t.Update(e.ctx, at, storage.AnyETag)
		e.must(err, "update at the "+tc.what+" limit")
		_, err = t.Transact(e.ctx, "p", []storage.Op{{Kind: storage.OpUpdate, Entity: at, ETag: storage.AnyETag}})
		e.must(err, "transact at the "+tc.what+" limit")
		if d := sameProps(e.getEntity(t, "p", rk).Props, tc.at); d != "" {
			e.Errorf("entity at the %s limit: %s", tc.what, d)
		}

		// Over the limit, on a row that exists and on one that does not.
		for _, rk := range []string{rk, "over"} {
			over := ent("p", rk, tc.over)
			_, err = t.Add(e.ctx, over)
			e.is(err, storage.ErrInvalid, "add over the "+tc.what+" limit")
			_, err = t.Upsert(e.ctx, over)
			e.is(err, storage.ErrInvalid, "upsert over the "+tc.what+" limit")
			_, err = t.Update(e.ctx, over, storage.AnyETag)
			e.is(err, storage.ErrInvalid, "update over the "+tc.what+" limit")
			_, err = t.Transact(e.ctx, "p", []storage.Op{
				{Kind: storage.OpUpsert, Entity: ent("p", "other", nil)},
				{Kind: storage.OpUpsert, Entity: over},
			})
			e.txIndex(err, 1, storage.ErrInvalid, "transact over the "+tc.what+" limit")
		}
		if d := sameProps(e.getEntity(t, "p", rk).Props, tc.at); d != "" {
			e.Errorf("entity at the %s limit after refused writes: %s", tc.what, d)
		}
		for _, rk := range []string{"over", "other"} {
			_, err = t.Get(e.ctx, "p", rk)
			e.is(err, storage.ErrNotFound, "get "+rk+" after writes over the "+tc.what+" limit")
		}
	}
}

// sizedBatch returns upserts on partition pk whose BatchSize is exactly
// size, each entity within Azure's limits: strings of up to chunk
// characters, which BatchSize counts one byte a character.
func sizedBatch(e *env, pk string, size int) []storage.Op {
	e.Helper()
	var ops []storage.Op
	for i := 0; len(ops) < storage.MaxBatchOps; i++ {
		ent := ent(pk, rowKey(i), map[string]any{})
		ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: ent})
		for j := 0; ; j++ {
			name := fmt.Sprintf("S%d", j)
			ent.Props[name] = ""
			rest := size - storage.BatchSize(ops)
			n := chunk
			switch {
			case rest < 0:
				e.Fatalf("batch of %d bytes overshot by %d", size, -rest)
			case rest <= chunk:
				n = rest
			case rest < chunk+64:
				n = rest / 2 // the next property's own bytes must still fit
			}
			if storage.EntitySize(ent)+2*n > storage.MaxEntityBytes {
				delete(ent.Props, name)
				break
			}
			ent.Props[name] = strings.Repeat("x", n)
			if n == rest {
				return ops
			}
		}
	}
	e.Fatalf("no batch of %d bytes in %d operations", size, storage.MaxBatchOps)
	return nil
}

// testTableBatchBytes commits a transaction of exactly MaxBatchBytes by
// BatchSize and refuses one a byte larger.
func testTableBatchBytes(e *env) {
	t := e.table(e.b, "batchbytes")
	at := sizedBatch(e, "p", storage.MaxBatchBytes)
	etags, err := t.Transact(e.ctx, "p", at)
	e.must(err, fmt.Sprintf("transact of %d operations and %d bytes", len(at), storage.BatchSize(at)))
	if len(etags) != len(at) {
		e.Errorf("transact returned %d ETags for %d operations", len(etags), len(at))
	}
	over := sizedBatch(e, "q", storage.MaxBatchBytes+1)
	_, err = t.Transact(e.ctx, "q", over)
	e.is(err, storage.ErrInvalid, fmt.Sprintf("transact of %d operations and %d bytes", len(over), storage.BatchSize(over)))
	ents, err := storage.QueryAll(e.ctx, t, "q", storage.QueryOptions{})
	e.must(err, "query")
	if len(ents) != 0 {
		e.Errorf("a refused transaction left %d entities", len(ents))
	}
}

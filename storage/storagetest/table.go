package storagetest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/reversi-cloud/reversi/storage"
)

func ent(pk, rk string, props map[string]any) storage.Entity {
	return storage.Entity{PartitionKey: pk, RowKey: rk, Props: props}
}

func (e *env) getEntity(t storage.Table, pk, rk string) storage.Entity {
	e.Helper()
	got, err := t.Get(e.ctx, pk, rk)
	e.must(err, fmt.Sprintf("get (%q, %q)", pk, rk))
	return got
}

// sameProps reports how got differs from want, or "" if it does not.
// Types must match exactly: an int64 must come back an int64, a binary a
// []byte (empty, not absent, when stored empty).
func sameProps(got, want map[string]any) string {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s missing", k))
			continue
		}
		switch w := w.(type) {
		case []byte:
			if g, ok := g.([]byte); !ok || !bytes.Equal(g, w) {
				diffs = append(diffs, fmt.Sprintf("%s = %T of %d, want []byte of %d", k, g, lenOf(g), len(w)))
			}
		default:
			if g != w {
				diffs = append(diffs, fmt.Sprintf("%s = %T %.40v, want %T %.40v", k, g, g, w, w))
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s unexpected", k))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func lenOf(v any) int {
	if b, ok := v.([]byte); ok {
		return len(b)
	}
	return -1
}

func testTableBasic(e *env) {
	t := e.table(e.b, "basic")
	e.must(t.Create(e.ctx), "create an existing table")
	v1 := map[string]any{"A": "one", "B": int64(1)}
	etag1, err := t.Add(e.ctx, ent("p", "r", v1))
	e.must(err, "add")
	if etag1 == "" {
		e.Error("add returned no ETag")
	}
	_, err = t.Add(e.ctx, ent("p", "r", v1))
	e.is(err, storage.ErrExists, "add twice")

	got := e.getEntity(t, "p", "r")
	if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag != etag1 {
		e.Errorf("get: keys (%q, %q) ETag %q, want (p, r) %q", got.PartitionKey, got.RowKey, got.ETag, etag1)
	}
	if d := sameProps(got.Props, v1); d != "" {
		e.Errorf("get: %s", d)
	}

	// Update replaces the whole entity: B goes.
	v2 := map[string]any{"A": "two"}
	etag2, err := t.Update(e.ctx, ent("p", "r", v2), etag1)
	e.must(err, "update")
	if etag2 == "" || etag2 == etag1 {
		e.Errorf("update returned ETag %q, want a new one (old %q)", etag2, etag1)
	}
	if d := sameProps(e.getEntity(t, "p", "r").Props, v2); d != "" {
		e.Errorf("get after update: %s", d)
	}
	_, err = t.Update(e.ctx, ent("p", "r", v1), etag1)
	e.is(err, storage.ErrPreconditionFailed, "update with a stale ETag")
	e.is(t.Delete(e.ctx, "p", "r", etag1), storage.ErrPreconditionFailed, "delete with a stale ETag")
	etag3, err := t.Update(e.ctx, ent("p", "r", v1), storage.AnyETag)
	e.must(err, "update with AnyETag")
	if got := e.getEntity(t, "p", "r"); got.ETag != etag3 {
		e.Errorf("get after update: ETag %q, want %q", got.ETag, etag3)
	}
	e.must(t.Delete(e.ctx, "p", "r", etag3), "delete")
	e.is(t.Delete(e.ctx, "p", "r", etag3), storage.ErrNotFound, "delete a deleted entity")
	e.is(t.Delete(e.ctx, "p", "r", storage.AnyETag), storage.ErrNotFound, "delete a deleted entity with AnyETag")
	_, err = t.Get(e.ctx, "p", "r")
	e.is(err, storage.ErrNotFound, "get a deleted entity")
	_, err = t.Update(e.ctx, ent("p", "r", v1), storage.AnyETag)
	e.is(err, storage.ErrNotFound, "update an absent entity with AnyETag")
	_, err = t.Update(e.ctx, ent("p", "r", v1), etag3)
	e.is(err, storage.ErrNotFound, "update an absent entity with an old ETag")

	u1, err := t.Upsert(e.ctx, ent("p", "u", v1))
	e.must(err, "upsert new")
	u2, err := t.Upsert(e.ctx, ent("p", "u", v2))
	e.must(err, "upsert existing")
	if u1 == "" || u2 == "" || u1 == u2 {
		e.Errorf("upsert ETags %q then %q, want two different ones", u1, u2)
	}
	if d := sameProps(e.getEntity(t, "p", "u").Props, v2); d != "" {
		e.Errorf("get after upsert: %s", d)
	}
	e.must(t.Delete(e.ctx, "p", "u", storage.AnyETag), "delete with AnyETag")

	// An empty key is a key like any other.
	_, err = t.Add(e.ctx, ent("", "", map[string]any{}))
	e.must(err, "add with empty keys")
	e.getEntity(t, "", "")

	e.must(t.Drop(e.ctx), "drop table")
	e.is(t.Drop(e.ctx), storage.ErrNotFound, "drop a dropped table")
}

func testTableNotCreated(e *env) {
	t := e.b.Table(e.tableName("absent"))
	_, err := t.Add(e.ctx, ent("p", "r", nil))
	e.is(err, storage.ErrNotFound, "add")
	_, err = t.Upsert(e.ctx, ent("p", "r", nil))
	e.is(err, storage.ErrNotFound, "upsert")
	_, err = t.Get(e.ctx, "p", "r")
	e.is(err, storage.ErrNotFound, "get")
	_, err = t.Query(e.ctx, "p", storage.QueryOptions{})
	e.is(err, storage.ErrNotFound, "query")
	_, err = t.Transact(e.ctx, "p", []storage.Op{{Kind: storage.OpAdd, Entity: ent("p", "r", nil)}})
	e.is(err, storage.ErrNotFound, "transact")
	e.is(t.Drop(e.ctx), storage.ErrNotFound, "drop")
}

func testTablePropertyTypes(e *env) {
	t := e.table(e.b, "types")
	big := make([]byte, storage.MaxPropertyBytes)
	for i := range big {
		big[i] = byte(i * 7)
	}
	props := map[string]any{
		"S":         "héllo, wörld ✓ 🂡",
		"Empty":     "",
		"LongS":     strings.Repeat("s", storage.MaxPropertyBytes/2), // 64 KiB in UTF-16
		"I":         int64(42),
		"Neg":       int64(-1),
		"Over53":    int64(1<<53 + 1), // not exact in a float64
		"Max":       int64(math.MaxInt64),
		"Min":       int64(math.MinInt64),
		"Zero":      int64(0),
		"T":         true,
		"F":         false,
		"Bin":       []byte{0, 1, 2, 255},
		"EmptyBin":  []byte{},
		"BigBin":    big,
		"under_sco": "names may hold underscores",
	}
	etag, err := t.Add(e.ctx, ent("p", "types", props))
	e.must(err, "add")
	got := e.getEntity(t, "p", "types")
	if got.ETag != etag {
		e.Errorf("get: ETag %q, want %q", got.ETag, etag)
	}
	if d := sameProps(got.Props, props); d != "" {
		e.Errorf("round trip: %s", d)
	}
	page, err := t.Query(e.ctx, "p", storage.QueryOptions{})
	e.must(err, "query")
	if len(page.Entities) != 1 {
		e.Fatalf("query: %d entities, want 1", len(page.Entities))
	}
	if d := sameProps(page.Entities[0].Props, props); d != "" {
		e.Errorf("round trip through query: %s", d)
	}
	if page.Entities[0].ETag != etag {
		e.Errorf("query: ETag %q, want %q", page.Entities[0].ETag, etag)
	}
}

func testTableLimits(e *env) {
	t := e.table(e.b, "limits")
	many := map[string]any{}
	for i := range storage.MaxProperties + 1 {
		many[fmt.Sprintf("P%d", i)] = int64(i)
	}
	huge := map[string]any{} // each property within its limit, the entity over 1 MiB
	for i := range 17 {
		huge[fmt.Sprintf("B%d", i)] = make([]byte, storage.MaxPropertyBytes)
	}
	for _, tc := range []struct {
		what string
		e    storage.Entity
	}{
		{"int property", ent("p", "r", map[string]any{"N": 5})},
		{"int32 property", ent("p", "r", map[string]any{"N": int32(5)})},
		{"float64 property", ent("p", "r", map[string]any{"N": 1.5})},
		{"nil property", ent("p", "r", map[string]any{"N": nil})},
		{"binary over 64 KiB", ent("p", "r", map[string]any{"B": make([]byte, storage.MaxPropertyBytes+1)})},
		{"string over 64 KiB in UTF-16", ent("p", "r", map[string]any{"S": strings.Repeat("s", storage.MaxPropertyBytes/2+1)})},
		{"string of three-byte characters over 64 KiB in UTF-16", ent("p", "r", map[string]any{"S": strings.Repeat("✓", storage.MaxPropertyBytes/2+1)})},
		{"string of surrogate pairs over 64 KiB in UTF-16", ent("p", "r", map[string]any{"S": strings.Repeat("🂡", storage.MaxPropertyBytes/4) + "s"})},
		{"253 properties", ent("p", "r", many)},
		{"entity over 1 MiB", ent("p", "r", huge)},
		{"reserved property name", ent("p", "r", map[string]any{"Timestamp": "x"})},
		{"empty property name", ent("p", "r", map[string]any{"": "x"})},
		{"property name with a space", ent("p", "r", map[string]any{"a b": "x"})},
		{"row key with /", ent("p", "a/b", nil)},
		{"row key with \\", ent("p", `a\b`, nil)},
		{"row key with #", ent("p", "a#b", nil)},
		{"row key with ?", ent("p", "a?b", nil)},
		{"row key with a tab", ent("p", "a\tb", nil)},
		{"partition key with /", ent("a/b", "r", nil)},
		{"row key over 1 KiB", ent("p", strings.Repeat("k", storage.MaxKeyBytes+1), nil)},
	} {
		_, err := t.Add(e.ctx, tc.e)
		e.is(err, storage.ErrInvalid, "add with "+tc.what)
		_, err = t.Upsert(e.ctx, tc.e)
		e.is(err, storage.ErrInvalid, "upsert with "+tc.what)
	}
	_, err := t.Update(e.ctx, ent("p", "r", nil), "")
	e.is(err, storage.ErrInvalid, "update with an empty ETag")
	e.is(t.Delete(e.ctx, "p", "r", ""), storage.ErrInvalid, "delete with an empty ETag")
	for _, tc := range []struct{ what, pk, rk string }{
		{"row key with #", "p", "a#b"},
		{"partition key with ?", "a?b", "r"},
	} {
		e.is(t.Delete(e.ctx, tc.pk, tc.rk, storage.AnyETag), storage.ErrInvalid, "delete with "+tc.what)
		_, err := t.Get(e.ctx, tc.pk, tc.rk)
		e.is(err, storage.ErrInvalid, "get with "+tc.what)
	}
	_, err = t.Query(e.ctx, "p", storage.QueryOptions{Limit: 1001})
	e.is(err, storage.ErrInvalid, "query with limit 1001")
	page, err := t.Query(e.ctx, "p", storage.QueryOptions{})
	e.must(err, "query")
	if len(page.Entities) != 0 {
		e.Errorf("an invalid write left %d entities", len(page.Entities))
	}
}

func testTableCopies(e *env) {
	t := e.table(e.b, "copies")
	bin := []byte("abc")
	props := map[string]any{"B": bin, "S": "s"}
	_, err := t.Add(e.ctx, ent("p", "r", props))
	e.must(err, "add")
	bin[0] = 'X'
	props["S"] = "changed"
	props["New"] = "added"
	got := e.getEntity(t, "p", "r")
	want := map[string]any{"B": []byte("abc"), "S": "s"}
	if d := sameProps(got.Props, want); d != "" {
		e.Errorf("the caller's changes after add reached the stored entity: %s", d)
	}
	got.Props["B"].([]byte)[0] = 'Y'
	got.Props["S"] = "changed"
	if d := sameProps(e.getEntity(t, "p", "r").Props, want); d != "" {
		e.Errorf("changes to a returned entity reached the stored one: %s", d)
	}
}

// fill writes n entities to partition pk, row keys rowKey(0..n-1), in
// transactions of at most MaxBatchOps, writing the batches in reverse
// order so that the store cannot return them in insertion order by luck.
func (e *env) fill(t storage.Table, pk string, n int) {
	e.Helper()
	for hi := n; hi > 0; hi -= storage.MaxBatchOps {
		var ops []storage.Op
		for i := hi - 1; i >= max(0, hi-storage.MaxBatchOps); i-- {
			ops = append(ops, storage.Op{Kind: storage.OpUpsert, Entity: ent(pk, rowKey(i), map[string]any{"I": int64(i)})})
		}
		_, err := t.Transact(e.ctx, pk, ops)
		e.must(err, fmt.Sprintf("fill %s: transaction of %d", pk, len(ops)))
	}
}

func rowKey(i int) string { return fmt.Sprintf("r%05d", i) }

// checkRun checks that ents are exactly the rows lo..hi-1 of fill, in order.
func (e *env) checkRun(ents []storage.Entity, pk string, lo, hi int, what string) {
	e.Helper()
	if len(ents) != hi-lo {
		e.Errorf("%s: %d entities, want %d", what, len(ents), hi-lo)
		return
	}
	for i, x := range ents {
		want := lo + i
		if x.PartitionKey != pk || x.RowKey != rowKey(want) || x.Props["I"] != int64(want) || x.ETag == "" {
			e.Errorf("%s: entity %d is (%q, %q) %v ETag %q, want (%q, %q)", what, i, x.PartitionKey, x.RowKey, x.Props, x.ETag, pk, rowKey(want))
			return
		}
	}
}

func testTableQuery(e *env) {
	t := e.table(e.b, "query")
	e.fill(t, "p", 20)
	e.fill(t, "o", 3) // sorts before p
	e.fill(t, "q", 3) // and after
	_, err := t.Add(e.ctx, ent("pp", rowKey(0), map[string]any{"I": int64(0)}))
	e.must(err, "add to another partition with p as prefix")
	query := func(opts storage.QueryOptions) storage.Page {
		e.Helper()
		p, err := t.Query(e.ctx, "p", opts)
		e.must(err, fmt.Sprintf("query %+v", opts))
		return p
	}
	for _, tc := range []struct {
		from, to string
		lo, hi   int
	}{
		{"", "", 0, 20},
		{rowKey(5), rowKey(10), 5, 10},
		{rowKey(5), "", 5, 20},
		{"", rowKey(3), 0, 3},
		{"r00004x", "r00007x", 5, 8}, // bounds between keys
		{rowKey(7), rowKey(7), 7, 7}, // empty range
		{"s", "", 20, 20},
	} {
		p := query(storage.QueryOptions{From: tc.from, To: tc.to})
		e.checkRun(p.Entities, "p", tc.lo, tc.hi, fmt.Sprintf("query [%q, %q)", tc.from, tc.to))
		if p.Next != "" {
			e.Errorf("query [%q, %q): continuation %q on a short page", tc.from, tc.to, p.Next)
		}
	}
	// Paging by hand: 7, 7, then the last 6 with no continuation.
	var all []storage.Entity
	opts := storage.QueryOptions{Limit: 7}
	for i := 0; ; i++ {
		p := query(opts)
		if i < 2 && (len(p.Entities) != 7 || p.Next == "") {
			e.Fatalf("page %d: %d entities, continuation %q; want 7 and a continuation", i, len(p.Entities), p.Next)
		}
		all = append(all, p.Entities...)
		if p.Next == "" {
			if i != 2 {
				e.Errorf("paging ended after page %d, want 2", i)
			}
			break
		}
		opts.Continuation = p.Next
	}
	e.checkRun(all, "p", 0, 20, "pages of 7")
	// A range with paging.
	ents, err := storage.QueryAll(e.ctx, t, "p", storage.QueryOptions{From: rowKey(3), To: rowKey(17), Limit: 4})
	e.must(err, "query all")
	e.checkRun(ents, "p", 3, 17, "query all [3, 17) in pages of 4")

	empty := func(pk string) {
		e.Helper()
		p, err := t.Query(e.ctx, pk, storage.QueryOptions{})
		e.must(err, "query "+pk)
		if len(p.Entities) != 0 || p.Next != "" {
			e.Errorf("query of partition %q: %d entities, continuation %q", pk, len(p.Entities), p.Next)
		}
	}
	empty("none")
	empty("")
}

func testTableQueryPaging(e *env) {
	t := e.table(e.b, "paging")
	const n = 1050
	e.fill(t, "p", n)
	p, err := t.Query(e.ctx, "p", storage.QueryOptions{})
	e.must(err, "query")
	if len(p.Entities) != 1000 || p.Next == "" {
		e.Fatalf("first page: %d entities, continuation %q; want 1000 and a continuation", len(p.Entities), p.Next)
	}
	e.checkRun(p.Entities, "p", 0, 1000, "first page")
	p2, err := t.Query(e.ctx, "p", storage.QueryOptions{Continuation: p.Next})
	e.must(err, "query second page")
	e.checkRun(p2.Entities, "p", 1000, n, "second page")
	if p2.Next != "" {
		e.Errorf("second page: continuation %q", p2.Next)
	}
	all, err := storage.QueryAll(e.ctx, t, "p", storage.QueryOptions{})
	e.must(err, "query all")
	e.checkRun(all, "p", 0, n, "query all")
}

func testTableTransact(e *env) {
	t := e.table(e.b, "tx")
	upd, err := t.Add(e.ctx, ent("p", "upd", map[string]any{"V": "old"}))
	e.must(err, "add")
	del, err := t.Add(e.ctx, ent("p", "del", nil))
	e.must(err, "add")
	_, err = t.Add(e.ctx, ent("p", "ups", map[string]any{"V": "old"}))
	e.must(err, "add")
	ops := []storage.Op{
		{Kind: storage.OpAdd, Entity: ent("p", "add", map[string]any{"V": "new"})},
		{Kind: storage.OpUpsert, Entity: ent("p", "ups", map[string]any{"V": "new"})},
		{Kind: storage.OpUpsert, Entity: ent("p", "ups2", map[string]any{"V": "new"})},
		{Kind: storage.OpUpdate, Entity: ent("p", "upd", map[string]any{"V": "new"}), ETag: upd},
		{Kind: storage.OpDelete, Entity: ent("p", "del", nil), ETag: del},
	}
	etags, err := t.Transact(e.ctx, "p", ops)
	e.must(err, "transact")
	if len(etags) != len(ops) {
		e.Fatalf("transact returned %d ETags for %d operations", len(etags), len(ops))
	}
	for i, rk := range []string{"add", "ups", "ups2", "upd"} {
		got := e.getEntity(t, "p", rk)
		if etags[i] == "" || got.ETag != etags[i] {
			e.Errorf("%s: ETag %q, transaction returned %q", rk, got.ETag, etags[i])
		}
		if got.Props["V"] != "new" {
			e.Errorf("%s: V = %v, want new", rk, got.Props["V"])
		}
	}
	if etags[4] != "" {
		e.Errorf("delete in transaction returned ETag %q, want none", etags[4])
	}
	_, err = t.Get(e.ctx, "p", "del")
	e.is(err, storage.ErrNotFound, "get an entity deleted in a transaction")

	// AnyETag in a batch.
	_, err = t.Transact(e.ctx, "p", []storage.Op{
		{Kind: storage.OpUpdate, Entity: ent("p", "ups", map[string]any{"V": "any"}), ETag: storage.AnyETag},
		{Kind: storage.OpDelete, Entity: ent("p", "ups2", nil), ETag: storage.AnyETag},
	})
	e.must(err, "transact with AnyETag")
	if got := e.getEntity(t, "p", "ups"); got.Props["V"] != "any" {
		e.Errorf("update with AnyETag in a transaction: V = %v", got.Props["V"])
	}

	// A full batch of the maximum size.
	var full []storage.Op
	for i := range storage.MaxBatchOps {
		full = append(full, storage.Op{Kind: storage.OpAdd, Entity: ent("big", rowKey(i), map[string]any{"I": int64(i)})})
	}
	etags, err = t.Transact(e.ctx, "big", full)
	e.must(err, "transact of MaxBatchOps")
	if len(etags) != storage.MaxBatchOps {
		e.Errorf("transact of %d returned %d ETags", storage.MaxBatchOps, len(etags))
	}
}

// txIndex checks that err is a *TxError at index wrapping want.
func (e *env) txIndex(err error, index int, want error, what string) {
	e.Helper()
	var te *storage.TxError
	if !errors.As(err, &te) {
		e.Errorf("%s: got %v, want a *storage.TxError", what, err)
		return
	}
	if te.Index != index || !errors.Is(err, want) {
		e.Errorf("%s: failed at operation %d with %v, want %d with %v", what, te.Index, te.Err, index, want)
	}
}

func testTableTransactRollback(e *env) {
	t := e.table(e.b, "rollback")
	keep := map[string]any{"V": "kept"}
	old, err := t.Add(e.ctx, ent("p", "old", keep))
	e.must(err, "add")
	_, err = t.Update(e.ctx, ent("p", "old", keep), old)
	e.must(err, "update") // old is now a stale ETag
	cur := e.getEntity(t, "p", "old").ETag
	// Deleting "gone" in a batch that fails must leave it in place.
	_, err = t.Add(e.ctx, ent("p", "gone", keep))
	e.must(err, "add")

	check := func(what string) {
		e.Helper()
		for _, rk := range []string{"n1", "n2", "n3"} {
			_, err := t.Get(e.ctx, "p", rk)
			e.is(err, storage.ErrNotFound, what+": get "+rk+" after rollback")
		}
		got := e.getEntity(t, "p", "old")
		if got.ETag != cur || sameProps(got.Props, keep) != "" {
			e.Errorf("%s: old changed by a failed transaction: %+v", what, got)
		}
		e.getEntity(t, "p", "gone")
	}
	newEnt := func(rk string) storage.Entity { return ent("p", rk, map[string]any{"V": "new"}) }
	for _, tc := range []struct {
		what  string
		ops   []storage.Op
		index int
		want  error
	}{
		{"add of an existing key in the middle", []storage.Op{
			{Kind: storage.OpAdd, Entity: newEnt("n1")},
			{Kind: storage.OpDelete, Entity: ent("p", "gone", nil), ETag: storage.AnyETag},
			{Kind: storage.OpAdd, Entity: newEnt("old")},
			{Kind: storage.OpAdd, Entity: newEnt("n2")},
		}, 2, storage.ErrExists},
		{"update with a stale ETag", []storage.Op{
			{Kind: storage.OpUpsert, Entity: newEnt("n1")},
			{Kind: storage.OpUpdate, Entity: newEnt("old"), ETag: old},
			{Kind: storage.OpDelete, Entity: ent("p", "gone", nil), ETag: storage.AnyETag},
		}, 1, storage.ErrPreconditionFailed},
		{"delete with a stale ETag", []storage.Op{
			{Kind: storage.OpAdd, Entity: newEnt("n1")},
			{Kind: storage.OpAdd, Entity: newEnt("n2")},
			{Kind: storage.OpAdd, Entity: newEnt("n3")},
			{Kind: storage.OpDelete, Entity: ent("p", "old", nil), ETag: old},
		}, 3, storage.ErrPreconditionFailed},
		{"update of an absent entity", []storage.Op{
			{Kind: storage.OpAdd, Entity: newEnt("n1")},
			{Kind: storage.OpUpdate, Entity: newEnt("n2"), ETag: storage.AnyETag},
		}, 1, storage.ErrNotFound},
		{"delete of an absent entity", []storage.Op{
			{Kind: storage.OpDelete, Entity: ent("p", "n3", nil), ETag: storage.AnyETag},
			{Kind: storage.OpAdd, Entity: newEnt("n1")},
		}, 0, storage.ErrNotFound},
	} {
		_, err := t.Transact(e.ctx, "p", tc.ops)
		e.txIndex(err, tc.index, tc.want, tc.what)
		check(tc.what)
	}
}

func testTableTransactInvalid(e *env) {
	t := e.table(e.b, "txinvalid")
	_, err := t.Add(e.ctx, ent("p", "old", nil))
	e.must(err, "add")
	add := func(pk, rk string) storage.Op {
		return storage.Op{Kind: storage.OpAdd, Entity: ent(pk, rk, map[string]any{"V": "x"})}
	}
	var tooMany []storage.Op
	for i := range storage.MaxBatchOps + 1 {
		tooMany = append(tooMany, add("p", rowKey(i)))
	}
	var tooBig []storage.Op // each entity within limits, the batch over 4 MiB
	for i := range 80 {
		tooBig = append(tooBig, storage.Op{Kind: storage.OpAdd, Entity: ent("p", rowKey(i), map[string]any{"B": make([]byte, 60<<10)})})
	}
	for _, tc := range []struct {
		what string
		pk   string
		ops  []storage.Op
	}{
		{"no operations", "p", nil},
		{"more than MaxBatchOps", "p", tooMany},
		{"over 4 MiB", "p", tooBig},
		{"mixed partitions", "p", []storage.Op{add("p", "a"), add("q", "b")}},
		{"operations on another partition", "p", []storage.Op{add("q", "a")}},
		{"one row key twice", "p", []storage.Op{add("p", "a"), {Kind: storage.OpUpsert, Entity: ent("p", "a", nil)}}},
		{"a forbidden row key", "p", []storage.Op{add("p", "a"), add("p", "b/c")}},
		{"a forbidden partition key", "p#", []storage.Op{add("p#", "a")}},
		{"an int property", "p", []storage.Op{add("p", "a"), {Kind: storage.OpAdd, Entity: ent("p", "b", map[string]any{"N": 1})}}},
		{"an update with no ETag", "p", []storage.Op{{Kind: storage.OpUpdate, Entity: ent("p", "old", nil)}}},
		{"a delete with no ETag", "p", []storage.Op{{Kind: storage.OpDelete, Entity: ent("p", "old", nil)}}},
		{"an unknown kind", "p", []storage.Op{{Kind: storage.OpKind(99), Entity: ent("p", "a", nil)}}},
	} {
		_, err := t.Transact(e.ctx, tc.pk, tc.ops)
		e.is(err, storage.ErrInvalid, "transact with "+tc.what)
	}
	ents, err := storage.QueryAll(e.ctx, t, "p", storage.QueryOptions{})
	e.must(err, "query")
	if len(ents) != 1 {
		e.Errorf("invalid transactions left %d entities, want the 1 added first", len(ents))
	}
}

func testTableETagRace(e *env) {
	t := e.table(e.b, "race")
	_, err := t.Add(e.ctx, ent("p", "counter", map[string]any{"N": int64(0)}))
	e.must(err, "add counter")
	const workers, each = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				for attempt := 0; ; attempt++ {
					if attempt > 1000 {
						e.Errorf("worker %d: no increment after %d attempts", w, attempt)
						return
					}
					cur, err := t.Get(e.ctx, "p", "counter")
					if err != nil {
						e.Errorf("worker %d: get: %v", w, err)
						return
					}
					n, err := storage.PropInt64(cur, "N")
					if err != nil {
						e.Errorf("worker %d: %v", w, err)
						return
					}
					cur.Props["N"] = n + 1
					_, err = t.Update(e.ctx, cur, cur.ETag)
					if errors.Is(err, storage.ErrPreconditionFailed) {
						continue
					}
					if err != nil {
						e.Errorf("worker %d: update: %v", w, err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	got := e.getEntity(t, "p", "counter")
	if n, _ := storage.PropInt64(got, "N"); n != workers*each {
		e.Errorf("counter after %d×%d increments: %d", workers, each, n)
	}
}

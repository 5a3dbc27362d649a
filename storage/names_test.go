package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name         string
		queue, table bool
	}{
		{name: "abc", queue: true, table: true},
		{name: "a1-b2", queue: true},
		{name: "a1b2", queue: true, table: true},
		{name: "1ab", queue: true},
		{name: "Abc", table: true},
		{name: "ab"},
		{name: strings.Repeat("a", 63), queue: true, table: true},
		{name: strings.Repeat("a", 64)},
		{name: "a--b"},
		{name: "-ab"},
		{name: "ab-"},
		{name: "a_b"},
		{name: "a.b"},
		{name: "tables", queue: true},
		{name: "TABLES"},
		{name: "ab\x00"},
	} {
		check := func(kind string, err error, ok bool) {
			t.Helper()
			if ok && err != nil {
				t.Errorf("%s name %q: %v, want valid", kind, tc.name, err)
			}
			if !ok && !errors.Is(err, storage.ErrInvalid) {
				t.Errorf("%s name %q: %v, want ErrInvalid", kind, tc.name, err)
			}
		}
		check("queue", storage.ValidQueueName(tc.name), tc.queue)
		check("container", storage.ValidContainerName(tc.name), tc.queue)
		check("table", storage.ValidTableName(tc.name), tc.table)
	}
}

func TestValidBlobName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "a/b/c": true, "ü.bin": true, ".a": true, strings.Repeat("x", 1024): true,
		"": false, "a/": false, "a.": false, "a\x00": false, "a\x7fb": false, "\xff": false,
		strings.Repeat("x", 1025): false,
	} {
		err := storage.ValidBlobName(name)
		if ok != (err == nil) || (!ok && !errors.Is(err, storage.ErrInvalid)) {
			t.Errorf("ValidBlobName(%.20q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestValidKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"": true, "abc": true, "a b": true, "ü-€-🂡": true, "a|b:c": true, strings.Repeat("k", 1024): true,
		"a/b": false, `a\b`: false, "a#b": false, "a?b": false, "a\tb": false, "a\x7fb": false,
		"a\u0085b": false, "\xff": false, strings.Repeat("k", 1025): false,
	} {
		err := storage.ValidKey(key)
		if ok != (err == nil) || (!ok && !errors.Is(err, storage.ErrInvalid)) {
			t.Errorf("ValidKey(%.20q) = %v, want ok=%v", key, err, ok)
		}
	}
}

func TestValidPropertyName(t *testing.T) {
	for name, ok := range map[string]bool{
		"A": true, "_x": true, "a1": true, "größe": true, strings.Repeat("p", 255): true,
		"": false, "1a": false, "a b": false, "a-b": false, "a@odata.type": false,
		"PartitionKey": false, "RowKey": false, "Timestamp": false, strings.Repeat("p", 256): false,
	} {
		err := storage.ValidPropertyName(name)
		if ok != (err == nil) {
			t.Errorf("ValidPropertyName(%.20q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestValidEntity(t *testing.T) {
	e := func(props map[string]any) storage.Entity {
		return storage.Entity{PartitionKey: "p", RowKey: "r", Props: props}
	}
	// Strings are measured in UTF-16: "€" is one unit, "🂡" two.
	const half = storage.MaxPropertyBytes / 2
	for _, tc := range []struct {
		what string
		e    storage.Entity
		ok   bool
	}{
		{"no props", e(nil), true},
		{"all types", e(map[string]any{"S": "s", "I": int64(1), "B": true, "X": []byte{}}), true},
		{"32K ASCII", e(map[string]any{"S": strings.Repeat("a", half)}), true},
		{"32K+1 ASCII", e(map[string]any{"S": strings.Repeat("a", half+1)}), false},
		{"32K euro signs (96 KiB of UTF-8)", e(map[string]any{"S": strings.Repeat("€", half)}), true},
		{"16K surrogate pairs", e(map[string]any{"S": strings.Repeat("🂡", half/2)}), true},
		{"16K+1 surrogate pairs", e(map[string]any{"S": strings.Repeat("🂡", half/2+1)}), false},
		{"invalid UTF-8 string", e(map[string]any{"S": "\xff"}), false},
		{"64 KiB binary", e(map[string]any{"X": make([]byte, storage.MaxPropertyBytes)}), true},
		{"64 KiB+1 binary", e(map[string]any{"X": make([]byte, storage.MaxPropertyBytes+1)}), false},
		{"int", e(map[string]any{"I": 1}), false},
		{"uint64", e(map[string]any{"I": uint64(1)}), false},
		{"time", e(map[string]any{"T": time.Now()}), false},
		{"nil", e(map[string]any{"N": nil}), false},
		{"bad key", storage.Entity{PartitionKey: "p", RowKey: "a/b"}, false},
	} {
		err := storage.ValidEntity(tc.e)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, storage.ErrInvalid)) {
			t.Errorf("%s: ValidEntity = %v, want ok=%v", tc.what, err, tc.ok)
		}
	}

	// 252 properties are allowed, 253 not.
	props := map[string]any{}
	for i := range storage.MaxProperties {
		props["P"+strings.Repeat("x", i)] = true
	}
	if err := storage.ValidEntity(e(props)); err != nil {
		t.Errorf("252 properties: %v", err)
	}
	props["Q"] = true
	if err := storage.ValidEntity(e(props)); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("253 properties: %v, want ErrInvalid", err)
	}

	// Sixteen 64 KiB binaries plus overheads pass 1 MiB; fifteen do not.
	big := map[string]any{}
	for i := range 15 {
		big[string(rune('A'+i))] = make([]byte, storage.MaxPropertyBytes)
	}
	if err := storage.ValidEntity(e(big)); err != nil {
		t.Errorf("15 binaries of 64 KiB: %v", err)
	}
	big["P"] = make([]byte, storage.MaxPropertyBytes)
	if err := storage.ValidEntity(e(big)); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("16 binaries of 64 KiB: %v, want ErrInvalid", err)
	}
}

func TestEntitySize(t *testing.T) {
	// Azure's formula: 4 + 2*len(PK+RK) + per property 8 + 2*len(name) + value.
	e := storage.Entity{PartitionKey: "pk", RowKey: "€", Props: map[string]any{
		"S": "🂡",          // 4 + 2*2
		"I": int64(1),     // 8
		"B": true,         // 1
		"X": []byte{1, 2}, // 4 + 2
	}}
	want := 4 + 2*3 + (8 + 2 + 8) + (8 + 2 + 8) + (8 + 2 + 1) + (8 + 2 + 6)
	if got := storage.EntitySize(e); got != want {
		t.Errorf("EntitySize = %d, want %d", got, want)
	}
}

func TestValidTransaction(t *testing.T) {
	op := func(kind storage.OpKind, pk, rk, etag string) storage.Op {
		return storage.Op{Kind: kind, Entity: storage.Entity{PartitionKey: pk, RowKey: rk}, ETag: etag}
	}
	ok := []storage.Op{
		op(storage.OpAdd, "p", "a", ""), op(storage.OpUpsert, "p", "b", ""),
		op(storage.OpUpdate, "p", "c", "*"), op(storage.OpDelete, "p", "d", `W/"1"`),
	}
	if err := storage.ValidTransaction("p", ok); err != nil {
		t.Errorf("valid transaction: %v", err)
	}
	for _, tc := range []struct {
		what  string
		ops   []storage.Op
		index int // -1: not a TxError
	}{
		{"empty", nil, -1},
		{"other partition", []storage.Op{op(storage.OpAdd, "p", "a", ""), op(storage.OpAdd, "q", "b", "")}, 1},
		{"same row twice", []storage.Op{op(storage.OpAdd, "p", "a", ""), op(storage.OpDelete, "p", "a", "*")}, 1},
		{"update without ETag", []storage.Op{op(storage.OpUpdate, "p", "a", "")}, 0},
		{"delete without ETag", []storage.Op{op(storage.OpDelete, "p", "a", "")}, 0},
		{"bad row key", []storage.Op{op(storage.OpAdd, "p", "a", ""), op(storage.OpDelete, "p", "a?", "*")}, 1},
		{"unknown kind", []storage.Op{op(7, "p", "a", "")}, 0},
	} {
		err := storage.ValidTransaction("p", tc.ops)
		if !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.what, err)
			continue
		}
		var te *storage.TxError
		if got := errors.As(err, &te); got != (tc.index >= 0) || (got && te.Index != tc.index) {
			t.Errorf("%s: %v, want a TxError at %d", tc.what, err, tc.index)
		}
	}
	var many []storage.Op
	for i := range storage.MaxBatchOps + 1 {
		many = append(many, op(storage.OpDelete, "p", strings.Repeat("k", i), "*"))
	}
	if err := storage.ValidTransaction("p", many[:storage.MaxBatchOps]); err != nil {
		t.Errorf("%d operations: %v", storage.MaxBatchOps, err)
	}
	if err := storage.ValidTransaction("p", many); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("%d operations: %v, want ErrInvalid", len(many), err)
	}
	// 100 entities of 48 KiB binary each: 4.7 MiB as JSON (base64).
	var big []storage.Op
	for i := range 100 {
		o := op(storage.OpUpsert, "p", strings.Repeat("k", i+1), "")
		o.Entity.Props = map[string]any{"X": make([]byte, 48<<10)}
		big = append(big, o)
	}
	if err := storage.ValidTransaction("p", big); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("4.7 MiB transaction: %v, want ErrInvalid", err)
	}
	if err := storage.ValidTransaction("p", big[:60]); err != nil { // 3.8 MiB as JSON
		t.Errorf("transaction of 60: %v", err)
	}
}

func TestValidQueueCalls(t *testing.T) {
	bad := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", what, err)
		}
	}
	good := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	good("defaults", storage.ValidMessage("x", storage.EnqueueOptions{}))
	good("64 KiB", storage.ValidMessage(strings.Repeat("x", storage.MaxMessageBytes), storage.EnqueueOptions{}))
	good("never expires, long delay", storage.ValidMessage("x", storage.EnqueueOptions{TTL: -1, Delay: storage.MaxVisibility}))
	bad("64 KiB+1", storage.ValidMessage(strings.Repeat("x", storage.MaxMessageBytes+1), storage.EnqueueOptions{}))
	bad("negative delay", storage.ValidMessage("x", storage.EnqueueOptions{Delay: -time.Second}))
	bad("delay past TTL", storage.ValidMessage("x", storage.EnqueueOptions{Delay: time.Minute, TTL: time.Minute}))
	bad("delay of the default TTL", storage.ValidMessage("x", storage.EnqueueOptions{Delay: storage.DefaultMessageTTL}))
	bad("TTL under a second", storage.ValidMessage("x", storage.EnqueueOptions{TTL: time.Millisecond}))

	good("dequeue", storage.ValidDequeue(32, time.Second))
	bad("dequeue 0", storage.ValidDequeue(0, time.Minute))
	bad("dequeue 33", storage.ValidDequeue(33, time.Minute))
	bad("dequeue hiding 0", storage.ValidDequeue(1, 0))
	bad("dequeue hiding 8 days", storage.ValidDequeue(1, 8*24*time.Hour))
	good("visibility 0", storage.ValidVisibility(0))
	bad("visibility -1s", storage.ValidVisibility(-time.Second))
	good("peek 1", storage.ValidPeek(1))
	bad("peek 33", storage.ValidPeek(33))
	good("receipt", storage.ValidReceipt(strings.Repeat("i", 256), strings.Repeat("r", 1024)))
	bad("no message ID", storage.ValidReceipt("", "r"))
	bad("message ID of 257 bytes", storage.ValidReceipt(strings.Repeat("i", 257), "r"))
	bad("no pop receipt", storage.ValidReceipt("i", ""))
	bad("pop receipt of 1025 bytes", storage.ValidReceipt("i", strings.Repeat("r", 1025)))
}

func TestQueryAll(t *testing.T) {
	b, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	tb := b.Table("queryall")
	if err := tb.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := storage.QueryAll(ctx, tb, "p", storage.QueryOptions{Limit: 4, From: "c"})
	if err != nil || len(all) != 23 || all[0].RowKey != "c" || all[22].RowKey != "y" {
		t.Errorf("QueryAll: %d entities, %v", len(all), err)
	}
	_, err = storage.QueryAll(ctx, b.Table("absent"), "p", storage.QueryOptions{})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("QueryAll of an absent table: %v", err)
	}
}

func TestProps(t *testing.T) {
	e := storage.Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{
		"S": "s", "I": int64(-3), "B": true, "X": []byte("x"),
	}}
	if v, err := storage.PropString(e, "S"); v != "s" || err != nil {
		t.Errorf("PropString = %q, %v", v, err)
	}
	if v, err := storage.PropInt64(e, "I"); v != -3 || err != nil {
		t.Errorf("PropInt64 = %d, %v", v, err)
	}
	if v, err := storage.PropBool(e, "B"); !v || err != nil {
		t.Errorf("PropBool = %v, %v", v, err)
	}
	if v, err := storage.PropBytes(e, "X"); string(v) != "x" || err != nil {
		t.Errorf("PropBytes = %q, %v", v, err)
	}
	if _, err := storage.PropString(e, "missing"); !errors.Is(err, storage.ErrNoProperty) {
		t.Errorf("PropString of a missing property: %v", err)
	}
	_, err := storage.PropInt64(e, "S")
	if !errors.Is(err, storage.ErrPropertyType) || !strings.Contains(err.Error(), `"S"`) {
		t.Errorf("PropInt64 of a string: %v", err)
	}
}

package spread_test

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/spread"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

// split places names by a hash: the suite's names land on both accounts.
func split(n int) func(string) int {
	return func(name string) int {
		h := fnv.New32a()
		h.Write([]byte(name))
		return int(h.Sum32() % uint32(n))
	}
}

func embeddedAccounts(t *testing.T, n int) []storage.Backend {
	t.Helper()
	var accts []storage.Backend
	for range n {
		b, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, b)
	}
	return accts
}

func open(t *testing.T, cfg spread.Config) *spread.Backend {
	t.Helper()
	b, err := spread.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConformance holds a backend over two embedded accounts, its blobs,
// queues and tables split between them by name, to Azure's semantics.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		return open(t, spread.Config{Accounts: embeddedAccounts(t, 2), Blob: split(2), Queue: split(2), Table: split(2)})
	})
}

// TestPlacement checks where things land, on the accounts themselves.
func TestPlacement(t *testing.T) {
	ctx := context.Background()
	accts := embeddedAccounts(t, 3)
	onAccount := func(name string) int { return int(name[0]-'a') % 3 }
	b := open(t, spread.Config{Accounts: accts, Blob: onAccount, Queue: func(string) int { return 2 }})
	defer b.Close()

	c := b.Container("data")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	names := []string{"b2", "a1", "c1", "a0", "c0", "b1"}
	for _, n := range names {
		if err := c.Put(ctx, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range accts {
		list, err := a.Container("data").List(ctx, "")
		if err != nil {
			t.Fatalf("account %d: %v", i, err)
		}
		for _, bi := range list {
			if onAccount(bi.Name) != i {
				t.Errorf("blob %s is on account %d, placed on %d", bi.Name, i, onAccount(bi.Name))
			}
		}
		if len(list) != 2 {
			t.Errorf("account %d holds %d blobs, want 2", i, len(list))
		}
	}
	list, err := c.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, bi := range list {
		got = append(got, bi.Name)
		if bi.Size != int64(len(bi.Name)) {
			t.Errorf("%s: size %d", bi.Name, bi.Size)
		}
	}
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Errorf("merged listing %q, want %q", got, want)
	}
	if list, err := c.List(ctx, "b"); err != nil || len(list) != 2 || list[0].Name != "b1" {
		t.Errorf("listing with a prefix: %v %v", list, err)
	}
	// A blob present on an account it is not placed on is not found.
	if err := accts[0].Container("data").Put(ctx, "b9", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "b9"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get of a blob on another account: %v, want ErrNotFound", err)
	}

	// Queues go whole to their account; tables, without a placement, to account 0.
	if err := b.Queue("work").Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Queue("work").Enqueue(ctx, "m", storage.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := accts[2].Queue("work").ApproximateLength(ctx); err != nil || n != 1 {
		t.Errorf("queue on account 2: %d messages, %v", n, err)
	}
	if err := b.Table("rows").Create(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := accts[0].Table("rows").Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Errorf("table not on account 0: %v", err)
	}

	// Drop acts on every account that has the container.
	if err := accts[1].Container("data").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Drop(ctx); err != nil {
		t.Errorf("drop with the container missing on one account: %v", err)
	}
	for i, a := range accts {
		if _, err := a.Container("data").List(ctx, ""); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("account %d still has the container: %v", i, err)
		}
	}
	if err := c.Drop(ctx); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("drop of a dropped container: %v, want ErrNotFound", err)
	}
	if _, err := c.List(ctx, ""); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("list of a dropped container: %v, want ErrNotFound", err)
	}
}

func TestConfig(t *testing.T) {
	accts := embeddedAccounts(t, 1)
	for _, tc := range []struct {
		what string
		cfg  spread.Config
		want string
	}{
		{"no accounts", spread.Config{}, "no accounts"},
		{"nil account", spread.Config{Accounts: []storage.Backend{accts[0], nil}}, "account 1 is nil"},
	} {
		if _, err := spread.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
	b := open(t, spread.Config{Accounts: accts, Blob: func(string) int { return 1 }})
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `blob "x" placed on account 1 of 1`) {
			t.Errorf("placement out of range: panic %v", r)
		}
	}()
	_ = b.Container("data").Put(context.Background(), "x", nil)
}

// TestMeteredAccounts: metered account by account, a container's
// creation and a listing, which go to every account, count once for each
// as Azure bills them; a put goes to one account and counts once.
func TestMeteredAccounts(t *testing.T) {
	ctx := context.Background()
	accts := embeddedAccounts(t, 3)
	m, err := storage.NewMeteredAccounts(accts, func(metered []storage.Backend) (storage.Backend, error) {
		return spread.New(spread.Config{Accounts: metered, Blob: split(3)})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c := m.Container("data")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := c.Put(ctx, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := c.List(ctx, ""); err != nil || len(list) != 4 {
		t.Fatalf("list: %v, %d blobs", err, len(list))
	}
	got := map[string]int64{}
	for _, o := range m.Stats().Ops {
		got[o.Operation] += o.Count
	}
	want := map[string]int64{"create": 3, "put": 4, "list": 3}
	if !maps.Equal(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

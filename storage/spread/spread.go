// Package spread implements storage.Backend over several backends, one per
// storage account, so that a run's blob data (and its bandwidth and
// request rate) is shared by several accounts. Each blob lives on the
// account that a placement function of its name chooses; a queue or a
// table lives whole on the account its own placement function chooses.
//
// A container exists on every account: Create and Drop act on all of
// them, List merges their listings in name order, and every call about
// one blob goes to that blob's account only. Errors are the accounts'
// own, so their sentinels (storage.ErrNotFound and the rest) hold.
//
// Every process that works on the same data must use the same accounts,
// in the same order, with the same placement: a blob written through one
// placement is not found through another.
package spread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/reversi-cloud/reversi/storage"
)

// Config lists the accounts and says where each name goes. A placement
// function returns an index into Accounts; it must be a pure function of
// the name (it is called on every blob call), and returning an index out
// of range is a bug of the caller's that panics. A nil placement puts
// everything of its kind on account 0.
type Config struct {
	// Accounts are the backends, at least one; Close closes them all.
	Accounts []storage.Backend
	// Blob places each blob by its name (within its container).
	Blob func(name string) int
	// Queue places each queue by its name.
	Queue func(name string) int
	// Table places each table by its name.
	Table func(name string) int
}

// Validate checks that there are accounts and none is nil.
func (c Config) Validate() error {
	if len(c.Accounts) == 0 {
		return errors.New("spread: config: no accounts")
	}
	for i, a := range c.Accounts {
		if a == nil {
			return fmt.Errorf("spread: config: account %d is nil", i)
		}
	}
	return nil
}

// Backend is a storage.Backend over the accounts of a Config. It is safe
// for concurrent use if the accounts are.
type Backend struct {
	accounts           []storage.Backend
	blob, queue, table func(string) int
}

var _ storage.Backend = (*Backend)(nil)

// New validates cfg and returns the backend over its accounts.
func New(cfg Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Backend{accounts: slices.Clone(cfg.Accounts), blob: cfg.Blob, queue: cfg.Queue, table: cfg.Table}, nil
}

// account is the index place gives name, checked; 0 without a placement.
func (b *Backend) account(place func(string) int, kind, name string) int {
	if place == nil {
		return 0
	}
	i := place(name)
	if i < 0 || i >= len(b.accounts) {
		panic(fmt.Sprintf("spread: %s %q placed on account %d of %d", kind, name, i, len(b.accounts)))
	}
	return i
}

// Queue returns the handle of the account the queue is placed on.
func (b *Backend) Queue(name string) storage.Queue {
	return b.accounts[b.account(b.queue, "queue", name)].Queue(name)
}

// Table returns the handle of the account the table is placed on.
func (b *Backend) Table(name string) storage.Table {
	return b.accounts[b.account(b.table, "table", name)].Table(name)
}

// Container returns a handle on the container of every account.
func (b *Backend) Container(name string) storage.Container {
	c := &container{b: b, all: make([]storage.Container, len(b.accounts))}
	for i, a := range b.accounts {
		c.all[i] = a.Container(name)
	}
	return c
}

// Close closes every account.
func (b *Backend) Close() error {
	var errs []error
	for i, a := range b.accounts {
		if err := a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing account %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// container routes each blob to its account. It embeds no account's
// handle on purpose: a method that Container gained would then quietly go
// to that account for every blob.
type container struct {
	b   *Backend
	all []storage.Container // one per account
}

// of is the handle on the account of blob name.
func (c *container) of(name string) storage.Container {
	return c.all[c.b.account(c.b.blob, "blob", name)]
}

func (c *container) Name() string { return c.all[0].Name() }

// Create creates the container on every account.
func (c *container) Create(ctx context.Context) error {
	for i, h := range c.all {
		if err := h.Create(ctx); err != nil {
			return fmt.Errorf("account %d: %w", i, err)
		}
	}
	return nil
}

// Drop drops the container on every account that has it: ErrNotFound
// only if none has.
func (c *container) Drop(ctx context.Context) error {
	var errs []error
	missing := 0
	for i, h := range c.all {
		switch err := h.Drop(ctx); {
		case errors.Is(err, storage.ErrNotFound):
			missing++
			if missing == len(c.all) {
				return err
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("account %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

func (c *container) PutNew(ctx context.Context, name string, data []byte) error {
	return c.of(name).PutNew(ctx, name, data)
}

func (c *container) Put(ctx context.Context, name string, data []byte) error {
	return c.of(name).Put(ctx, name, data)
}

func (c *container) Upload(ctx context.Context, name string, r io.Reader) error {
	return c.of(name).Upload(ctx, name, r)
}

func (c *container) Get(ctx context.Context, name string) ([]byte, error) {
	return c.of(name).Get(ctx, name)
}

func (c *container) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	return c.of(name).Open(ctx, name, offset, length)
}

func (c *container) Delete(ctx context.Context, name string) error {
	return c.of(name).Delete(ctx, name)
}

// List lists every account at once and merges the listings in name
// order.
func (c *container) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	lists := make([][]storage.BlobInfo, len(c.all))
	errs := make([]error, len(c.all))
	var wg sync.WaitGroup
	for i, h := range c.all {
		wg.Go(func() {
			if lists[i], errs[i] = h.List(ctx, prefix); errs[i] != nil {
				errs[i] = fmt.Errorf("account %d: %w", i, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	all := slices.Concat(lists...)
	slices.SortFunc(all, func(a, b storage.BlobInfo) int { return cmp.Compare(a.Name, b.Name) })
	return all, nil
}

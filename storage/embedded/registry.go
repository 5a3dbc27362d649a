package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/reversi-cloud/reversi/storage"
)

// resource is a queue, table or container incarnation.
type resource interface {
	incarnation() uint64
	// retire marks the resource dropped once the writes under way on it
	// are done, so none lands after its data is deleted.
	retire()
}

// create registers a new incarnation of a resource unless one exists.
func (b *Backend) create(ctx context.Context, nameErr error, reg *sync.Map, kind byte, name string, newRes func(inc uint64) (resource, error)) error {
	if err := b.enter(ctx, nameErr); err != nil {
		return err
	}
	defer b.ops.RUnlock()
	if err := b.writable(); err != nil {
		return err
	}
	b.regMu.Lock()
	defer b.regMu.Unlock()
	if _, ok := reg.Load(name); ok {
		return nil
	}
	inc := b.newID()
	r, err := newRes(inc)
	if err != nil {
		return err
	}
	batch := b.db.NewBatch()
	batch.Set(registryKey(kind, name), binary.BigEndian.AppendUint64(nil, inc), nil)
	if err := b.commit(batch, func() {}); err != nil {
		return err
	}
	reg.Store(name, r)
	return nil
}

// drop unregisters a resource and deletes its keys of the given kinds; it
// returns the resource for the caller to clean up after.
func (b *Backend) drop(ctx context.Context, nameErr error, reg *sync.Map, kind byte, what, name string, dataKinds ...byte) (resource, error) {
	if err := b.enter(ctx, nameErr); err != nil {
		return nil, err
	}
	defer b.ops.RUnlock()
	b.regMu.Lock()
	defer b.regMu.Unlock()
	v, ok := reg.LoadAndDelete(name)
	if !ok {
		return nil, fmt.Errorf("drop %s %s: %w", what, name, storage.ErrNotFound)
	}
	r := v.(resource)
	r.retire()
	batch := b.db.NewBatch()
	batch.Delete(registryKey(kind, name), nil)
	for _, k := range dataKinds {
		p := prefix(k, r.incarnation())
		batch.DeleteRange(p, prefixEnd(p), nil)
	}
	if err := b.commit(batch, func() {}); err != nil {
		return nil, fmt.Errorf("drop %s %s: %w", what, name, err)
	}
	return r, nil
}

package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key layout of the store. Every key starts with a kind byte; data keys
// then carry the 8-byte incarnation of their queue, table or container,
// so a resource dropped and created again never meets its old data, and a
// drop is one range deletion.
const (
	keyGen      = 'g' // "g" -> the generation of the last Open (uvarint)
	keyRegistry = 'r' // "r" kind name -> incarnation (8 bytes)
	keyEntity   = 'e' // "e" inc pk 0x00 rk -> entity (table.go); keys hold no 0x00
	keyMessage  = 'm' // "m" inc id -> message (queue.go)
	keyVisible  = 'v' // "v" inc visibleAt(8) seq(8) -> id: messages by visibility time
	keyBlob     = 'b' // "b" inc name -> blob (blob.go)
)

// Registry kinds.
const (
	kindQueue     = 'q'
	kindTable     = 't'
	kindContainer = 'c'
)

// prefix is the start of the keys of one kind and incarnation.
func prefix(kind byte, inc uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, 64), kind), inc)
}

// prefixEnd is the first key past every key starting with p.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i]++; end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

func registryKey(kind byte, name string) []byte {
	return append([]byte{keyRegistry, kind}, name...)
}

// subdirectory of root holding one directory of blob files per container.
const blobDir = "blobs"

// compactionSpare is the disk space, beyond room for the memtables, kept
// free for the store's compactions.
const compactionSpare = 64 << 20

// storeDir is the subdirectory of root holding the Pebble store.
const storeDir = "store"

// openStore opens (or creates) the store under root, takes a new
// generation, and loads the registries, repairing what a process that
// died may have left: blob files and directories nothing refers to, and
// message leases.
func (b *Backend) openStore(memory int64) error {
	cache := pebble.NewCache(memory / 2)
	defer cache.Unref()
	opts := &pebble.Options{
		Cache:                       cache,
		MemTableSize:                uint64(memory / 4),
		MemTableStopWritesThreshold: 2,
		DisableWAL:                  !b.persist,
		Logger:                      storeLogger{b},
	}
	if b.persist && !b.fsync || !b.persist && b.spill {
		opts.FS = kernelFS{vfs.Default}
	}
	if !b.persist && !b.spill {
		// A store that dies with its process lives in memory: opening
		// one on disk costs milliseconds of file creation and syncs, and
		// tests open thousands. Its memory grows with the run (compressed
		// rows and messages, not blob files); Persist bounds it.
		opts.FS = vfs.NewMem()
	}
	b.space.init(b.root, 2*opts.MemTableSize+compactionSpare)
	if err := os.MkdirAll(filepath.Join(b.root, blobDir), 0o700); err != nil {
		return err
	}
	db, err := pebble.Open(filepath.Join(b.root, storeDir), opts)
	if err != nil {
		return err
	}
	b.db = db
	if err := b.load(); err != nil {
		db.Close()
		return err
	}
	return nil
}

// load takes a new generation and reads the registries.
func (b *Backend) load() error {
	batch := b.db.NewBatch()
	v, closer, err := b.db.Get([]byte{keyGen})
	switch {
	case err == nil:
		b.gen, _ = binary.Uvarint(v)
		closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		return err
	}
	b.gen++
	batch.Set([]byte{keyGen}, binary.AppendUvarint(nil, b.gen), nil)

	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: []byte{keyRegistry}, UpperBound: []byte{keyRegistry + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	live := map[string]bool{} // blob directories of live containers
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		name, inc := string(k[2:]), binary.BigEndian.Uint64(it.Value())
		switch k[1] {
		case kindTable:
			b.tables.Store(name, &table{inc: inc})
		case kindQueue:
			q, err := b.loadQueue(inc, batch)
			if err != nil {
				return fmt.Errorf("loading queue %s: %w", name, err)
			}
			b.queues.Store(name, q)
		case kindContainer:
			c, err := b.loadContainer(inc)
			if err != nil {
				return fmt.Errorf("loading container %s: %w", name, err)
			}
			b.containers.Store(name, c)
			live[filepath.Base(c.dir)] = true
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := b.apply(batch, func() {}, b.persist); err != nil {
		return err
	}
	// Directories of containers dropped, or created by a process that died
	// before registering them.
	ents, err := os.ReadDir(filepath.Join(b.root, blobDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !live[e.Name()] {
			if err := os.RemoveAll(filepath.Join(b.root, blobDir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// commit applies batch to the store, calls unlock once the batch is
// applied and visible to readers, and returns once it is durable (with
// Config.Persist). Writers release their lock before the sync, so writes
// under other locks (or the same one) share it.
func (b *Backend) commit(batch *pebble.Batch, unlock func()) error {
	return b.apply(batch, unlock, b.persist)
}

// commitLazy is commit for writes a crash may lose: the next Open undoes
// their effect anyway (dequeue leases). Later synced writes still sync
// them, in order.
func (b *Backend) commitLazy(batch *pebble.Batch, unlock func()) error {
	return b.apply(batch, unlock, false)
}

func (b *Backend) apply(batch *pebble.Batch, unlock func(), sync bool) error {
	var err error
	if sync {
		err = b.db.ApplyNoSyncWait(batch, pebble.Sync)
		unlock()
		if err == nil {
			err = batch.SyncWait()
		}
	} else {
		err = b.db.Apply(batch, pebble.NoSync)
		unlock()
	}
	batch.Close()
	if p := b.failed.Load(); err == nil && p != nil {
		err = *p
	}
	if err != nil {
		return b.describe(err)
	}
	return nil
}

// get reads one value, copied; nil if absent.
func (b *Backend) get(key []byte) (v []byte, err error) {
	err = b.read(key, func(stored []byte) error {
		v = bytes.Clone(stored)
		return nil
	})
	return v, err
}

// read calls f with one value, valid only during the call, or with nil
// if absent (an empty value is not nil), and returns f's error. Callers
// that decode the value into fresh memory use it rather than get: a copy
// per read was a good part of what the store allocated.
func (b *Backend) read(key []byte, f func(v []byte) error) error {
	v, closer, err := b.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return f(nil)
	}
	if err != nil {
		return b.describe(err)
	}
	defer closer.Close()
	if v == nil {
		v = []byte{}
	}
	return f(v)
}

// describe makes a store or file error say where it happened, and turns
// a full disk into ErrNoSpace.
func (b *Backend) describe(err error) error {
	if errors.Is(err, ErrNoSpace) || errors.Is(err, ErrClosed) {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return b.space.refuse(err)
	}
	return fmt.Errorf("embedded: store in %s: %w", b.root, err)
}

// writable fails with ErrNoSpace, before anything is written, when the
// disk is nearly full. Pebble treats a failed log write as fatal, and
// stalls writes when it cannot flush its memtables or compact, so the
// backend stops while there is still room for those.
func (b *Backend) writable() error {
	if !b.space.ok() {
		return b.space.refuse(nil)
	}
	return nil
}

// spaceGuard watches the free space of a file system, checking at most
// every few milliseconds while there is plenty. It takes no lock: every
// write passes it.
type spaceGuard struct {
	dir     string
	reserve uint64
	checked atomic.Int64 // time of the last check, in nanoseconds since start
	free    atomic.Uint64
	start   time.Time
}

func (g *spaceGuard) init(dir string, reserve uint64) {
	g.dir, g.reserve, g.start = dir, reserve, time.Now()
	g.free.Store(^uint64(0))
	g.checked.Store(-int64(time.Hour))
}

func (g *spaceGuard) ok() bool {
	now := int64(time.Since(g.start))
	if g.free.Load() > 4*g.reserve && now-g.checked.Load() < int64(10*time.Millisecond) {
		return true
	}
	if free, err := FreeSpace(g.dir); err == nil {
		g.free.Store(free)
		g.checked.Store(now)
	}
	return g.free.Load() >= g.reserve
}

// refuse describes a write refused, or failed with cause, for lack of
// space, with the space free now.
func (g *spaceGuard) refuse(cause error) error {
	if free, err := FreeSpace(g.dir); err == nil {
		g.free.Store(free)
	}
	return &NoSpaceError{Dir: g.dir, Free: g.free.Load(), Need: g.reserve, Err: cause}
}

// storeLogger keeps Pebble quiet and turns its fatal errors, which would
// exit the process, into the backend's failure: every later call returns
// the error, and nothing more is written.
type storeLogger struct{ b *Backend }

func (storeLogger) Infof(string, ...any)  {}
func (storeLogger) Errorf(string, ...any) {}
func (l storeLogger) Fatalf(format string, args ...any) {
	err := l.b.describe(fmt.Errorf(format, args...))
	l.b.failed.CompareAndSwap(nil, &err)
}

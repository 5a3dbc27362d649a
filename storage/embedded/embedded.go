// Package embedded is an in-process storage.Backend with the semantics of
// Azure Storage: queues with visibility timeouts and pop receipts, block
// blobs written atomically, and tables with ETags and entity group
// transactions, all within Azure's limits.
//
// Queues, tables and the blob index live in a Pebble key-value store
// (an LSM tree), so memory stays within Config.MemoryBytes however large
// the run grows. Small blobs are stored in it too; larger ones are files
// published by the index. With Config.Persist the store is kept in
// Config.Dir and every write is durable when it returns: a process killed
// at any moment loses nothing it was told was written, and the next Open
// of the directory finds it, with the messages the dead process held
// visible again at once. Without Persist the store lives in a fresh
// directory that Close removes, and nothing is synced to disk.
// docs/embedded-storage.md describes the layout and the fsync policy.
//
// Every table partition, queue and container has its own lock, held only
// while a write is checked and applied, never across the disk sync, so
// concurrent writers share each sync (group commit).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/reversi-cloud/reversi/storage"
)

// ErrClosed is returned by every operation on a closed Backend.
var ErrClosed = errors.New("embedded: backend is closed")

// ErrNoSpace is returned, wrapped with the directory and the space free
// and needed, once the disk under the backend is full. Nothing written
// before is damaged; writes keep failing while space is short (every
// call, if the store itself met the full disk), and a later Open, once
// space is freed, finds every write that succeeded.
var ErrNoSpace = errors.New("out of disk space")

// NoSpaceError is ErrNoSpace with what a user needs to act on it: the
// directory, and the space free and needed there.
type NoSpaceError struct {
	Dir  string // the backend's directory
	Free uint64 // bytes free when the write was refused
	Need uint64 // bytes that must be free for writes to go on
	Err  error  // the file system's error when the disk itself filled; nil when refused ahead
}

func (e *NoSpaceError) Error() string {
	const mib = 1 << 20
	msg := fmt.Sprintf("embedded: %s: %v, %d MiB free where at least %d MiB are needed to go on", e.Dir, ErrNoSpace, e.Free/mib, (e.Need+mib-1)/mib)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

// Is makes a NoSpaceError match ErrNoSpace.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

// Unwrap returns the file system's error, if any.
func (e *NoSpaceError) Unwrap() error { return e.Err }

// Config configures an embedded Backend. The zero value is ready to use.
type Config struct {
	// Dir is the directory for the store and the blob files. Without
	// Persist, Open makes a fresh subdirectory in it and Close removes
	// that subdirectory; empty means the system's temporary directory.
	// Choose a directory on a disk large enough for the run.
	Dir string

	// Persist keeps the state in Dir itself across processes: Open
	// continues from what the last process left there (an empty directory
	// starts empty), and every acknowledged write survives as Durability
	// says. One process at a time may use the directory.
	Persist bool

	// SpillToDisk, without Persist, keeps the store's files in the
	// temporary directory instead of in memory, so that memory stays
	// bounded by MemoryBytes however large the run grows. Opening then
	// costs milliseconds more, which only matters to tests that open
	// thousands of stores.
	SpillToDisk bool

	// Durability is what an acknowledged write survives with Persist:
	// the death of the process (the default) or a power failure.
	Durability Durability

	// MemoryBytes bounds the memory of the store: its block cache and its
	// write buffers (memtables). Zero means DefaultMemoryBytes; values
	// below MinMemoryBytes, negative ones included, mean MinMemoryBytes.
	MemoryBytes int64

	// MaxInlineBlob is the largest blob kept inside the store; larger
	// ones are files. Zero means DefaultMaxInlineBlob; a negative value
	// puts every blob in a file.
	MaxInlineBlob int64
}

// oldStateFile is where versions before the store saved their state.
const oldStateFile = "embedded-state.gob"

// DefaultMemoryBytes is the default of Config.MemoryBytes.
const DefaultMemoryBytes = 64 << 20

// MinMemoryBytes is the least memory the store is given.
const MinMemoryBytes = 8 << 20

// DefaultMaxInlineBlob is the default of Config.MaxInlineBlob. Larger
// values would be copied again by every compaction of the store; smaller
// ones would pay a file's create and syncs for a few kilobytes.
const DefaultMaxInlineBlob = 64 << 10

func (c *Config) setDefaults() {
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	switch {
	case c.MemoryBytes == 0:
		c.MemoryBytes = DefaultMemoryBytes
	case c.MemoryBytes < MinMemoryBytes:
		c.MemoryBytes = MinMemoryBytes
	}
	switch {
	case c.MaxInlineBlob == 0:
		c.MaxInlineBlob = DefaultMaxInlineBlob
	case c.MaxInlineBlob < 0:
		c.MaxInlineBlob = -1 // even an empty blob goes to a file
	}
}

func (c *Config) validate() error {
	fi, err := os.Stat(c.Dir)
	if err != nil {
		return fmt.Errorf("embedded: storage directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("embedded: storage directory %s is not a directory", c.Dir)
	}
	return nil
}

// Backend is the embedded storage.Backend. It is safe for concurrent use.
type Backend struct {
	root      string   // the store and blob files live here
	persist   bool     // root outlives the backend
	spill     bool     // without persist, the store's files are on disk
	fsync     bool     // writes are fsynced (SurvivePowerLoss)
	lock      *os.File // held on root while persist is set
	db        *pebble.DB
	maxInline int64

	// ops is held shared by every call while it uses the store and
	// exclusively by Close, so the store never closes under a call.
	ops    sync.RWMutex
	closed bool
	failed atomic.Pointer[error] // first fatal store error; all calls fail after it
	space  spaceGuard
	reaper *reaper // unlinks the files of deleted and replaced blob versions

	// Registries of live resources by name, loaded at Open: there are few
	// of them, read on every call and written only by Create and Drop,
	// which regMu serializes.
	regMu      sync.Mutex
	queues     sync.Map // name -> *queue
	containers sync.Map // name -> *container
	tables     sync.Map // name -> *table

	// IDs (ETags, incarnations, file names) are the process's generation,
	// stored and bumped at each Open, then a counter: unique across
	// processes without a write per ID.
	gen uint64
	ctr atomic.Uint64

	// Queue times are wall-clock nanoseconds at Open plus the monotonic
	// time since, so they order correctly within a process and mean the
	// same to the next process.
	epoch     time.Time
	epochNano int64
	clock     func() time.Duration // tests' stand-in for time.Since(epoch); nil in use
}

var _ storage.Backend = (*Backend)(nil)

// Open starts an embedded backend.
func Open(cfg Config) (*Backend, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	now := time.Now()
	b := &Backend{persist: cfg.Persist, fsync: cfg.Persist && cfg.Durability.syncs(), spill: cfg.SpillToDisk, maxInline: cfg.MaxInlineBlob, epoch: now, epochNano: now.UnixNano()}
	if cfg.Persist {
		root, err := filepath.Abs(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
		b.root = root
		if _, err := os.Stat(filepath.Join(root, oldStateFile)); err == nil {
			return nil, fmt.Errorf("embedded: %s holds a run saved by an older version (%s), which this one cannot read; use another directory", root, oldStateFile)
		}
		if b.lock, err = lockDir(root); err != nil {
			return nil, err
		}
	} else {
		root, err := os.MkdirTemp(cfg.Dir, "reversi-embedded-")
		if err != nil {
			return nil, fmt.Errorf("embedded: make storage directory: %w", err)
		}
		b.root = root
	}
	if err := b.openStore(cfg.MemoryBytes); err != nil {
		b.release()
		return nil, b.describe(err)
	}
	b.reaper = newReaper()
	return b, nil
}

// release gives up the directory: the lock, or the temporary directory.
func (b *Backend) release() {
	if b.persist {
		b.lock.Close()
	} else {
		os.RemoveAll(b.root)
	}
}

// Close closes the store and releases the directory, removing it unless
// Config.Persist is set. Calls still running finish first; handles and
// streams used afterwards fail or read stale data.
func (b *Backend) Close() error {
	b.ops.Lock()
	defer b.ops.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.reaper.stop() // before the store closes and a temporary root goes
	err := b.db.Close()
	b.release()
	if err != nil && b.failed.Load() == nil {
		return fmt.Errorf("embedded: closing the store in %s: %w", b.root, err)
	}
	return nil
}

// Queue returns a handle on the named queue.
func (b *Backend) Queue(name string) storage.Queue {
	return &queueHandle{b: b, name: name, nameErr: storage.ValidQueueName(name)}
}

// Container returns a handle on the named container.
func (b *Backend) Container(name string) storage.Container {
	return &containerHandle{b: b, name: name, nameErr: storage.ValidContainerName(name)}
}

// Table returns a handle on the named table.
func (b *Backend) Table(name string) storage.Table {
	return &tableHandle{b: b, name: name, nameErr: storage.ValidTableName(name)}
}

// enter is the preamble of every operation: the backend must be open and
// healthy, the name valid and the context live. On success the caller
// holds b.ops shared and must call b.ops.RUnlock.
func (b *Backend) enter(ctx context.Context, nameErr error) error {
	if nameErr != nil {
		return nameErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.ops.RLock()
	if b.closed {
		b.ops.RUnlock()
		return ErrClosed
	}
	if p := b.failed.Load(); p != nil {
		b.ops.RUnlock()
		return *p
	}
	return nil
}

// now is the time since the backend opened, on the monotonic clock.
func (b *Backend) now() time.Duration {
	if b.clock != nil {
		return b.clock()
	}
	return time.Since(b.epoch)
}

// stamp is now as a stored time: nanoseconds on the wall clock.
func (b *Backend) stamp() int64 { return b.epochNano + int64(b.now()) }

// newID returns an ID never used before in this directory.
func (b *Backend) newID() uint64 { return b.gen<<40 | b.ctr.Add(1) }

// formatETag renders an ID as an opaque ETag in Azure's weak form.
func formatETag(id uint64) string { return `W/"` + strconv.FormatUint(id, 36) + `"` }

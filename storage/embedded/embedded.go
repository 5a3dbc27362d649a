// Package embedded is an in-process storage.Backend with the semantics of
// Azure Storage: queues with visibility timeouts and pop receipts, block
// blobs written atomically, and tables with ETags and entity group
// transactions, all within Azure's limits.
//
// Queue and table state is held in memory. Blob data lives in files, so a
// run may hold more blob data than fits in memory, except that small blobs
// are kept in memory up to a fixed budget (Config.MemoryBytes), sparing
// them the cost of creating a file. By default nothing survives Close;
// with Config.Persist, Close saves the state in Config.Dir and the next
// Open there picks it up, so a run can be inspected or continued by a
// later process. The backend is for single-machine runs and tests: a
// process that dies without Close loses what it did since it opened.
//
// Every queue, container, table and table partition has its own lock, and
// blob data is read and written outside any lock, so many goroutines can
// use one Backend without contending on a global lock.
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

	"github.com/reversi-cloud/reversi/storage"
)

// ErrClosed is returned by every operation on a closed Backend.
var ErrClosed = errors.New("embedded: backend is closed")

// Config configures an embedded Backend. The zero value is ready to use.
type Config struct {
	// Dir is the directory under which blob data is written. Open makes a
	// fresh subdirectory in it and Close removes that subdirectory. Empty
	// means the system's temporary directory. Choose a directory on a disk
	// large enough for the run's blobs.
	Dir string

	// Persist keeps the state in Dir itself across processes: Open loads
	// what an earlier Close saved there (an empty directory starts empty)
	// and Close saves queues, tables and blobs there instead of removing
	// them. One process at a time may use the directory.
	Persist bool

	// MemoryBytes bounds the blob data kept in memory instead of in files.
	// Blobs of up to MaxMemoryBlob bytes are held in memory while the
	// total stays within it. Zero means DefaultMemoryBytes; a negative
	// value puts every blob in a file.
	MemoryBytes int64
}

// DefaultMemoryBytes is the default of Config.MemoryBytes.
const DefaultMemoryBytes = 64 << 20

// MaxMemoryBlob is the largest blob kept in memory; larger ones always go
// to files, where the page cache serves them nearly as well.
const MaxMemoryBlob = 1 << 20

func (c *Config) setDefaults() {
	if c.Dir == "" {
		c.Dir = os.TempDir()
	}
	switch {
	case c.MemoryBytes == 0:
		c.MemoryBytes = DefaultMemoryBytes
	case c.MemoryBytes < 0:
		c.MemoryBytes = 0
	}
}

func (c *Config) validate() error {
	fi, err := os.Stat(c.Dir)
	if err != nil {
		return fmt.Errorf("embedded: blob directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("embedded: blob directory %s is not a directory", c.Dir)
	}
	return nil
}

// Backend is the embedded storage.Backend. It is safe for concurrent use.
type Backend struct {
	root    string   // this backend's own directory of blob files
	persist bool     // save state in root at Close
	lock    *os.File // held on root while persist is set

	// Registries of live resources by name. sync.Map suits them: they are
	// read on every call and written only by Create and Drop.
	queues     sync.Map // name -> *queue
	containers sync.Map // name -> *container
	tables     sync.Map // name -> *table

	seq    atomic.Uint64 // file names and ETags, unique for the backend's life
	closed atomic.Bool

	memBudget int64        // Config.MemoryBytes
	memUsed   atomic.Int64 // bytes of blob data held in memory

	// Queue times are kept as monotonic offsets from epoch, so that they
	// compare as plain integers and ignore wall-clock steps.
	epoch time.Time
	clock func() time.Duration // tests' stand-in for time.Since(epoch); nil in use
}

var _ storage.Backend = (*Backend)(nil)

// Open starts an embedded backend.
func Open(cfg Config) (*Backend, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Persist {
		root, err := filepath.Abs(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
		lock, err := lockDir(root)
		if err != nil {
			return nil, err
		}
		b := &Backend{root: root, persist: true, lock: lock, epoch: time.Now(), memBudget: cfg.MemoryBytes}
		if err := b.load(); err != nil {
			lock.Close()
			return nil, err
		}
		return b, nil
	}
	root, err := os.MkdirTemp(cfg.Dir, "reversi-embedded-")
	if err != nil {
		return nil, fmt.Errorf("embedded: make blob directory: %w", err)
	}
	return &Backend{root: root, epoch: time.Now(), memBudget: cfg.MemoryBytes}, nil
}

// Close discards all state and removes the blob files or, with
// Config.Persist, saves them for the next Open. Handles and streams still
// open afterwards fail or read stale data; close them first.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if b.persist {
		defer b.lock.Close()
		return b.save()
	}
	if err := os.RemoveAll(b.root); err != nil {
		return fmt.Errorf("embedded: remove blob directory: %w", err)
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

// now is the time since the backend opened, on the monotonic clock.
func (b *Backend) now() time.Duration {
	if b.clock != nil {
		return b.clock()
	}
	return time.Since(b.epoch)
}

// wall converts a time from now into wall-clock time.
func (b *Backend) wall(d time.Duration) time.Time { return b.epoch.Add(d) }

// check is the preamble of every operation: the backend must be open, the
// name valid and the context live.
func (b *Backend) check(ctx context.Context, nameErr error) error {
	if b.closed.Load() {
		return ErrClosed
	}
	if nameErr != nil {
		return nameErr
	}
	return ctx.Err()
}

// newETag returns a fresh opaque ETag in Azure's weak form.
func (b *Backend) newETag() string {
	return `W/"` + strconv.FormatUint(b.seq.Add(1), 36) + `"`
}

// reserveMemory claims n bytes of the memory budget for a blob, if they fit.
func (b *Backend) reserveMemory(n int) bool {
	if n > MaxMemoryBlob {
		return false
	}
	if b.memUsed.Add(int64(n)) > b.memBudget {
		b.memUsed.Add(-int64(n))
		return false
	}
	return true
}

// newBlobPath returns a file name in dir never used before.
func (b *Backend) newBlobPath(dir string) string {
	return filepath.Join(dir, strconv.FormatUint(b.seq.Add(1), 36))
}

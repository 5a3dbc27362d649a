package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/reversi-cloud/reversi/storage"
)

// blob is one committed version of a blob: a file nobody writes again.
type blob struct {
	path string
	size int64
}

// container maps blob names to files. Every write goes to a new file that
// is published by swapping the map entry under the lock, which is what a
// rename would do: readers see the old blob or the new one, never part of
// one. Readers open the file under the read lock, so a writer's removal
// of a replaced file, after the swap, cannot pull it from under them; an
// open file stays readable after it is unlinked.
type container struct {
	dir string

	mu      sync.RWMutex
	dropped bool
	blobs   map[string]blob
	names   sortedKeys
}

type containerHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *containerHandle) Name() string { return h.name }

// get returns the container, which may since have been dropped.
func (h *containerHandle) get(ctx context.Context) (*container, error) {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.containers.Load(h.name)
	if !ok {
		return nil, fmt.Errorf("container %s: %w", h.name, storage.ErrNotFound)
	}
	return v.(*container), nil
}

func (h *containerHandle) notFound() error {
	return fmt.Errorf("container %s: %w", h.name, storage.ErrNotFound)
}

func (h *containerHandle) Create(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	if _, ok := h.b.containers.Load(h.name); ok {
		return nil
	}
	// Each incarnation of a container has a directory of its own, so a
	// container made again after a drop never meets the old files.
	dir := h.b.newBlobPath(h.b.root)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create container %s: %w", h.name, err)
	}
	c := &container{dir: dir, blobs: map[string]blob{}}
	if _, loaded := h.b.containers.LoadOrStore(h.name, c); loaded {
		os.Remove(dir) // lost a race with another Create
	}
	return nil
}

func (h *containerHandle) Drop(ctx context.Context) error {
	if err := h.b.check(ctx, h.nameErr); err != nil {
		return err
	}
	v, ok := h.b.containers.LoadAndDelete(h.name)
	if !ok {
		return fmt.Errorf("drop container %s: %w", h.name, storage.ErrNotFound)
	}
	c := v.(*container)
	c.mu.Lock()
	c.dropped = true
	c.blobs, c.names = nil, sortedKeys{}
	c.mu.Unlock()
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("drop container %s: remove files: %w", h.name, err)
	}
	return nil
}

func (h *containerHandle) PutNew(ctx context.Context, name string, data []byte) error {
	return h.write(ctx, name, true, func(f *os.File) (int64, error) {
		n, err := f.Write(data)
		return int64(n), err
	})
}

func (h *containerHandle) Put(ctx context.Context, name string, data []byte) error {
	return h.write(ctx, name, false, func(f *os.File) (int64, error) {
		n, err := f.Write(data)
		return int64(n), err
	})
}

func (h *containerHandle) Upload(ctx context.Context, name string, r io.Reader) error {
	return h.write(ctx, name, false, func(f *os.File) (int64, error) {
		// io.Copy streams through a small buffer, or splices when r is a file.
		return io.Copy(f, ctxReader{ctx, r})
	})
}

// ctxReader stops a long upload once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// write stores a new version of blob name, filled by fill, and publishes it.
func (h *containerHandle) write(ctx context.Context, name string, onlyNew bool, fill func(*os.File) (int64, error)) error {
	if err := storage.ValidBlobName(name); err != nil {
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}
	c, err := h.get(ctx)
	if err != nil {
		return err
	}
	if onlyNew {
		// Fail early rather than write data only to throw it away; the
		// check is made again when publishing.
		c.mu.RLock()
		_, exists := c.blobs[name]
		dropped := c.dropped
		c.mu.RUnlock()
		if dropped {
			return h.notFound()
		}
		if exists {
			return fmt.Errorf("write blob %s/%s: %w", h.name, name, storage.ErrExists)
		}
	}
	path := h.b.newBlobPath(c.dir)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return h.notFound() // dropped meanwhile, its directory with it
		}
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}
	size, err := fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}

	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		os.Remove(path)
		return h.notFound()
	}
	old, exists := c.blobs[name]
	if exists && onlyNew {
		c.mu.Unlock()
		os.Remove(path)
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, storage.ErrExists)
	}
	c.blobs[name] = blob{path: path, size: size}
	if !exists {
		c.names.insert(name)
	}
	c.mu.Unlock()
	if exists {
		os.Remove(old.path) // readers holding it open keep their data
	}
	return nil
}

// open opens the current version of blob name.
func (h *containerHandle) open(ctx context.Context, name string) (*os.File, int64, error) {
	if err := storage.ValidBlobName(name); err != nil {
		return nil, 0, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	c, err := h.get(ctx)
	if err != nil {
		return nil, 0, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, 0, h.notFound()
	}
	bl, ok := c.blobs[name]
	if !ok {
		return nil, 0, fmt.Errorf("read blob %s/%s: %w", h.name, name, storage.ErrNotFound)
	}
	f, err := os.Open(bl.path)
	if err != nil {
		return nil, 0, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	return f, bl.size, nil
}

func (h *containerHandle) Get(ctx context.Context, name string) ([]byte, error) {
	f, size, err := h.open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	return data, nil
}

// Open streams a range of a blob. An offset past the end is ErrInvalid (on
// Azure, 416 Range Not Satisfiable); a length past the end stops at the end.
func (h *containerHandle) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	if offset < 0 {
		return nil, fmt.Errorf("open blob %s/%s: %w: negative offset %d", h.name, name, storage.ErrInvalid, offset)
	}
	f, size, err := h.open(ctx, name)
	if err != nil {
		return nil, err
	}
	if offset > size {
		f.Close()
		return nil, fmt.Errorf("open blob %s/%s: %w: offset %d is past the end at %d", h.name, name, storage.ErrInvalid, offset, size)
	}
	if length < 0 || length > size-offset {
		length = size - offset
	}
	return &section{SectionReader: io.NewSectionReader(f, offset, length), f: f}, nil
}

// section reads a range of a blob file with pread, so it needs no seek
// and shares nothing with other readers of the same file.
type section struct {
	*io.SectionReader
	f *os.File
}

func (s *section) Close() error { return s.f.Close() }

func (h *containerHandle) Delete(ctx context.Context, name string) error {
	if err := storage.ValidBlobName(name); err != nil {
		return fmt.Errorf("delete blob %s/%s: %w", h.name, name, err)
	}
	c, err := h.get(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return h.notFound()
	}
	bl, ok := c.blobs[name]
	if ok {
		delete(c.blobs, name)
		c.names.remove(name)
	}
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("delete blob %s/%s: %w", h.name, name, storage.ErrNotFound)
	}
	os.Remove(bl.path)
	return nil
}

func (h *containerHandle) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	c, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return nil, h.notFound()
	}
	var out []storage.BlobInfo
	c.names.ascend(prefix, func(name string) bool {
		if !strings.HasPrefix(name, prefix) {
			return false
		}
		out = append(out, storage.BlobInfo{Name: name, Size: c.blobs[name].size})
		return true
	})
	return out, nil
}

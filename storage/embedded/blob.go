package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/reversi-cloud/reversi/storage"
)

// blob is one committed version of a blob, never changed once stored:
// either a file nobody writes again or, for small blobs, a byte slice.
type blob struct {
	path string // the file holding the data; "" if data holds it
	data []byte
	size int64
}

// release frees what a replaced or deleted version holds. Readers that
// opened its file keep their data: an open file outlives its unlinking.
func (bl blob) release(b *Backend) {
	if bl.path != "" {
		os.Remove(bl.path)
	} else {
		b.memUsed.Add(-bl.size)
	}
}

// container maps blob names to versions. Every write makes a new version
// in full (a new file, or a new slice), then publishes it by swapping the
// map entry under the lock, which is what a rename would do: readers see
// the old blob or the new one, never part of one. Readers open the file
// under the read lock, so a writer's removal of a replaced file, after the
// swap, cannot pull it from under them.
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
	for _, bl := range c.blobs {
		if bl.path == "" {
			h.b.memUsed.Add(-bl.size)
		}
	}
	c.blobs, c.names = nil, sortedKeys{}
	c.mu.Unlock()
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("drop container %s: remove files: %w", h.name, err)
	}
	return nil
}

func (h *containerHandle) PutNew(ctx context.Context, name string, data []byte) error {
	return h.write(ctx, name, true, data, nil)
}

func (h *containerHandle) Put(ctx context.Context, name string, data []byte) error {
	return h.write(ctx, name, false, data, nil)
}

func (h *containerHandle) Upload(ctx context.Context, name string, r io.Reader) error {
	return h.write(ctx, name, false, nil, ctxReader{ctx, r})
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

// write stores a new version of blob name, holding data, or what r yields
// if r is not nil, and publishes it.
func (h *containerHandle) write(ctx context.Context, name string, onlyNew bool, data []byte, r io.Reader) error {
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
	if r != nil {
		// Read as much as may stay in memory; a longer stream goes to a
		// file, starting with what was read.
		buf := bytes.NewBuffer(make([]byte, 0, 32<<10))
		if _, err := buf.ReadFrom(io.LimitReader(r, MaxMemoryBlob+1)); err != nil {
			return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
		}
		data = buf.Bytes()
		if len(data) > MaxMemoryBlob {
			return h.writeFile(c, name, onlyNew, io.MultiReader(bytes.NewReader(data), r))
		}
		if cap(data)-len(data) > 4<<10 {
			data = bytes.Clone(data) // do not hold the buffer's slack against the budget
		}
	} else {
		data = bytes.Clone(data) // the caller may reuse its slice
	}
	if data == nil {
		data = []byte{}
	}
	if !h.b.reserveMemory(len(data)) {
		return h.writeFile(c, name, onlyNew, bytes.NewReader(data))
	}
	err = h.publish(c, name, onlyNew, blob{data: data, size: int64(len(data))})
	if err != nil {
		h.b.memUsed.Add(-int64(len(data)))
	}
	return err
}

// writeFile stores a new version of blob name in a file and publishes it.
func (h *containerHandle) writeFile(c *container, name string, onlyNew bool, r io.Reader) error {
	path := h.b.newBlobPath(c.dir)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return h.notFound() // dropped meanwhile, its directory with it
		}
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}
	// io.Copy uses the reader's WriteTo where it has one, so a
	// bytes.Reader is written in one call, without a buffer.
	size, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}
	err = h.publish(c, name, onlyNew, blob{path: path, size: size})
	if err != nil {
		os.Remove(path)
	}
	return err
}

// publish makes bl the current version of blob name.
func (h *containerHandle) publish(c *container, name string, onlyNew bool, bl blob) error {
	c.mu.Lock()
	if c.dropped {
		c.mu.Unlock()
		return h.notFound()
	}
	old, exists := c.blobs[name]
	if exists && onlyNew {
		c.mu.Unlock()
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, storage.ErrExists)
	}
	c.blobs[name] = bl
	if !exists {
		c.names.insert(name)
	}
	c.mu.Unlock()
	if exists {
		old.release(h.b)
	}
	return nil
}

// open returns the current version of blob name, with its file opened if
// it has one.
func (h *containerHandle) open(ctx context.Context, name string) (blob, *os.File, error) {
	if err := storage.ValidBlobName(name); err != nil {
		return blob{}, nil, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	c, err := h.get(ctx)
	if err != nil {
		return blob{}, nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return blob{}, nil, h.notFound()
	}
	bl, ok := c.blobs[name]
	if !ok {
		return blob{}, nil, fmt.Errorf("read blob %s/%s: %w", h.name, name, storage.ErrNotFound)
	}
	if bl.path == "" {
		return bl, nil, nil
	}
	f, err := os.Open(bl.path)
	if err != nil {
		return blob{}, nil, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	return bl, f, nil
}

func (h *containerHandle) Get(ctx context.Context, name string) ([]byte, error) {
	bl, f, err := h.open(ctx, name)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return bytes.Clone(bl.data), nil // the caller may change what it gets
	}
	defer f.Close()
	data := make([]byte, bl.size)
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
	bl, f, err := h.open(ctx, name)
	if err != nil {
		return nil, err
	}
	if offset > bl.size {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("open blob %s/%s: %w: offset %d is past the end at %d", h.name, name, storage.ErrInvalid, offset, bl.size)
	}
	if length < 0 || length > bl.size-offset {
		length = bl.size - offset
	}
	if f == nil {
		// The slice is never written again, so it is read in place.
		return io.NopCloser(bytes.NewReader(bl.data[offset : offset+length])), nil
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
	bl.release(h.b)
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

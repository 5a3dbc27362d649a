package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/reversi-cloud/reversi/storage"
)

// Blob records, store keys "b" inc name, hold the data of a small blob,
// or name the file holding a larger one.
const (
	blobInline = 'i' // the data follows
	blobFile   = 'f' // uvarint file ID, uvarint size
)

// blob is one committed version of a blob, never changed once stored.
type blob struct {
	file uint64 // the ID of the file holding the data; 0 if data holds it
	data []byte
	size int64
}

func (bl blob) encode() []byte {
	if bl.file == 0 {
		return append([]byte{blobInline}, bl.data...)
	}
	return binary.AppendUvarint(binary.AppendUvarint([]byte{blobFile}, bl.file), uint64(bl.size))
}

func decodeBlob(v []byte) (blob, error) {
	if len(v) > 0 && v[0] == blobInline {
		return blob{data: v[1:], size: int64(len(v) - 1)}, nil
	}
	r := reader{b: v}
	if r.byte() != blobFile {
		return blob{}, errCorrupt
	}
	bl := blob{file: r.uvarint(), size: int64(r.uvarint())}
	if bl.file == 0 && r.err == nil {
		r.err = errCorrupt
	}
	return bl, r.err
}

// container is one incarnation of a container. A write makes a new
// version in full, in a record or in a new file synced to disk, then
// publishes it by writing its record, which is what a rename would do:
// readers see the old blob or the new one, never part of one, and a crash
// leaves the old one or the new. The file of a replaced version is
// removed once the new record is durable; files no record names, left by
// a crash, are removed by the next Open. Readers open the file under the
// read lock, so a writer's removal of a replaced file, after publishing
// under the write lock, cannot pull it from under them.
type container struct {
	inc uint64
	dir string

	mu      sync.RWMutex
	dropped bool
}

func (c *container) incarnation() uint64 { return c.inc }

func (c *container) retire() {
	c.mu.Lock()
	c.dropped = true
	c.mu.Unlock()
}

func (c *container) blobKey(name string) []byte { return append(prefix(keyBlob, c.inc), name...) }

func (c *container) path(file uint64) string {
	return filepath.Join(c.dir, strconv.FormatUint(file, 16))
}

func (b *Backend) containerDir(inc uint64) string {
	return filepath.Join(b.root, blobDir, strconv.FormatUint(inc, 16))
}

// loadContainer opens a container and removes the files no record names:
// versions replaced or deleted just before a crash, and writes a crash cut
// short.
func (b *Backend) loadContainer(inc uint64) (*container, error) {
	c := &container{inc: inc, dir: b.containerDir(inc)}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, err
	}
	named := map[string]bool{}
	p := prefix(keyBlob, inc)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if v := it.Value(); len(v) > 0 && v[0] == blobFile {
			bl, err := decodeBlob(v)
			if err != nil {
				return nil, err
			}
			named[strconv.FormatUint(bl.file, 16)] = true
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !named[e.Name()] {
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

type containerHandle struct {
	b       *Backend
	name    string
	nameErr error
}

func (h *containerHandle) Name() string { return h.name }

// get enters the backend and finds the container, which may since have
// been dropped; on success the caller must call h.b.ops.RUnlock.
func (h *containerHandle) get(ctx context.Context) (*container, error) {
	if err := h.b.enter(ctx, h.nameErr); err != nil {
		return nil, err
	}
	v, ok := h.b.containers.Load(h.name)
	if !ok {
		h.b.ops.RUnlock()
		return nil, h.notFound()
	}
	return v.(*container), nil
}

func (h *containerHandle) notFound() error {
	return fmt.Errorf("container %s: %w", h.name, storage.ErrNotFound)
}

func (h *containerHandle) Create(ctx context.Context) error {
	err := h.b.create(ctx, h.nameErr, &h.b.containers, kindContainer, h.name, func(inc uint64) (resource, error) {
		// The directory is made first, so a registered container always
		// has one; a crash before registering leaves one the next Open removes.
		c := &container{inc: inc, dir: h.b.containerDir(inc)}
		if err := os.Mkdir(c.dir, 0o700); err != nil {
			return nil, h.b.describe(err)
		}
		return c, h.b.syncDir(filepath.Dir(c.dir))
	})
	if err != nil {
		return fmt.Errorf("create container %s: %w", h.name, err)
	}
	return nil
}

func (h *containerHandle) Drop(ctx context.Context) error {
	r, err := h.b.drop(ctx, h.nameErr, &h.b.containers, kindContainer, "container", h.name, keyBlob)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(r.(*container).dir); err != nil {
		return fmt.Errorf("drop container %s: remove files: %w", h.name, err)
	}
	return nil
}

// syncDir makes the entries of a directory durable, with SurvivePowerLoss.
func (b *Backend) syncDir(dir string) error {
	if !b.fsync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return b.describe(err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return b.describe(err)
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

// WriteTo hands the stream to w whole where the reader under it can (the
// storage wrapper's counting reader over a bytes.Reader, as the
// pipeline's uploads are), so that writeFile writes a blob in one call,
// not one for every 32 KiB of io.Copy's buffer, with the bytes copied
// into it first. Without it, the WriteTo of the readers under it went
// unused: a run to 8x8 ply 13 wrote all its blobs so. A write of bytes
// in memory is not stopped midway; the context is checked before it,
// and between the reads of any other reader.
func (c ctxReader) WriteTo(w io.Writer) (int64, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if wt, ok := c.r.(io.WriterTo); ok {
		return wt.WriteTo(w)
	}
	return io.Copy(w, struct{ io.Reader }{c})
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
	defer h.b.ops.RUnlock()
	if err := h.b.writable(); err != nil {
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	}
	if onlyNew {
		// Fail early rather than write data only to throw it away; the
		// check is made again when publishing.
		if err := h.absent(c, name); err != nil {
			return err
		}
	}
	if r != nil {
		// Read as much as may stay in the store; a longer stream goes to a
		// file, starting with what was read. Both copy the data, so the
		// buffer is free again when this returns.
		buf := uploadBufs.Get().(*bytes.Buffer)
		defer putUploadBuf(buf)
		if _, err := buf.ReadFrom(io.LimitReader(r, h.b.maxInline+1)); err != nil {
			return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
		}
		data = buf.Bytes()
		if int64(len(data)) > h.b.maxInline {
			return h.writeFile(c, name, onlyNew, io.MultiReader(bytes.NewReader(data), r))
		}
	}
	if int64(len(data)) > h.b.maxInline {
		return h.writeFile(c, name, onlyNew, bytes.NewReader(data))
	}
	return h.publish(c, name, onlyNew, blob{data: data, size: int64(len(data))})
}

// uploadBufs holds the buffers that streamed uploads are read into: a
// buffer per upload was a quarter of the bytes a pipeline run on the
// in-memory store allocates, and the garbage collections it caused.
var uploadBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledUpload is the largest buffer kept for reuse: one that has held
// a default-sized inline blob, not one grown for a store configured to
// keep much larger blobs inline.
const maxPooledUpload = 4 * DefaultMaxInlineBlob

func putUploadBuf(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledUpload {
		buf.Reset()
		uploadBufs.Put(buf)
	}
}

// absent fails unless blob name is absent.
func (h *containerHandle) absent(c *container, name string) error {
	c.mu.RLock()
	dropped, found := c.dropped, false
	err := h.b.read(c.blobKey(name), func(v []byte) error {
		found = v != nil
		return nil
	})
	c.mu.RUnlock()
	switch {
	case dropped:
		return h.notFound()
	case err != nil:
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, err)
	case found:
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, storage.ErrExists)
	}
	return nil
}

// writeFile stores a new version of blob name in a new file, durably,
// and publishes it.
func (h *containerHandle) writeFile(c *container, name string, onlyNew bool, r io.Reader) error {
	id := h.b.newID()
	path := c.path(id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return h.notFound() // dropped meanwhile, its directory with it
		}
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, h.b.describe(err))
	}
	// io.Copy uses the reader's WriteTo where it has one, so a
	// bytes.Reader is written in one call, without a buffer.
	size, err := io.Copy(f, r)
	if err == nil && h.b.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = h.b.syncDir(c.dir)
	}
	if err == nil {
		err = h.publish(c, name, onlyNew, blob{file: id, size: size})
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write blob %s/%s: %w", h.name, name, h.b.describe(err))
	}
	return nil
}

// publish makes bl the current version of blob name, durably, then
// removes the file of the version it replaced.
func (h *containerHandle) publish(c *container, name string, onlyNew bool, bl blob) error {
	key := c.blobKey(name)
	batch := h.b.db.NewBatch()
	batch.Set(key, bl.encode(), nil)
	c.mu.Lock()
	old, err := h.b.get(key)
	switch {
	case c.dropped:
		err = h.notFound()
	case err == nil && old != nil && onlyNew:
		err = fmt.Errorf("write blob %s/%s: %w", h.name, name, storage.ErrExists)
	}
	if err != nil {
		c.mu.Unlock()
		batch.Close()
		return err
	}
	if err := h.b.commit(batch, c.mu.Unlock); err != nil {
		return err
	}
	return h.release(c, old)
}

// release hands the file of a version replaced or deleted, once that is
// durable, to the reaper. Readers that opened the file keep their data:
// an open file outlives its unlinking.
func (h *containerHandle) release(c *container, old []byte) error {
	if old == nil {
		return nil
	}
	bl, err := decodeBlob(old)
	if err != nil || bl.file == 0 {
		return err
	}
	h.b.reaper.remove(c.path(bl.file))
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
	defer h.b.ops.RUnlock()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.dropped {
		return blob{}, nil, h.notFound()
	}
	v, err := h.b.get(c.blobKey(name))
	if err == nil && v == nil {
		err = storage.ErrNotFound
	}
	var bl blob
	if err == nil {
		bl, err = decodeBlob(v)
	}
	if err != nil {
		return blob{}, nil, fmt.Errorf("read blob %s/%s: %w", h.name, name, err)
	}
	if bl.file == 0 {
		return bl, nil, nil
	}
	f, err := os.Open(c.path(bl.file))
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
		return bl.data, nil // a copy of the stored value, the caller's to keep
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
	defer h.b.ops.RUnlock()
	key := c.blobKey(name)
	batch := h.b.db.NewBatch()
	batch.Delete(key, nil)
	c.mu.Lock()
	old, err := h.b.get(key)
	switch {
	case c.dropped:
		err = h.notFound()
	case err == nil && old == nil:
		err = storage.ErrNotFound
	}
	if err != nil {
		c.mu.Unlock()
		batch.Close()
		return fmt.Errorf("delete blob %s/%s: %w", h.name, name, err)
	}
	if err := h.b.commit(batch, c.mu.Unlock); err != nil {
		return fmt.Errorf("delete blob %s/%s: %w", h.name, name, err)
	}
	if err := h.release(c, old); err != nil {
		return fmt.Errorf("delete blob %s/%s: %w", h.name, name, err)
	}
	return nil
}

func (h *containerHandle) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	c, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	defer h.b.ops.RUnlock()
	start := c.blobKey("")
	lower := c.blobKey(prefix)
	it, err := h.b.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(lower)})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", h.name, h.b.describe(err))
	}
	defer it.Close()
	var out []storage.BlobInfo
	for it.First(); it.Valid(); it.Next() {
		bl, err := decodeBlob(it.Value())
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", h.name, err)
		}
		out = append(out, storage.BlobInfo{Name: string(it.Key()[len(start):]), Size: bl.size})
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("list %s: %w", h.name, h.b.describe(err))
	}
	return out, nil
}

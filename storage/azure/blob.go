package azure

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	azcontainer "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/google/uuid"

	"github.com/reversi-cloud/reversi/storage"
)

// listPageSize is the page size of List Blobs, storage.ListPageSize (5000)
// names a request, as storage.Metered bills it; tests lower it.
var listPageSize = storage.ListPageSize

// maxBlocks is Azure's limit of committed blocks in one block blob.
const maxBlocks = 50000

type container struct {
	b    *Backend
	name string
	c    *azcontainer.Client
}

func (c *container) Name() string { return c.name }

func (c *container) what(op, blobName string) string {
	if blobName == "" {
		return "container " + c.name + ": " + op
	}
	return fmt.Sprintf("container %s: %s %q", c.name, op, blobName)
}

func (c *container) check(blobName string) error {
	if err := storage.ValidContainerName(c.name); err != nil {
		return err
	}
	if blobName != "" {
		return storage.ValidBlobName(blobName)
	}
	return nil
}

func (c *container) Create(ctx context.Context) error {
	if err := c.check(""); err != nil {
		return err
	}
	_, err := c.b.retry.do(ctx, c.what("create", ""), func(ctx context.Context) error {
		_, err := c.c.Create(ctx, nil)
		return err
	})
	if errors.Is(err, storage.ErrExists) {
		return nil
	}
	return err
}

func (c *container) Drop(ctx context.Context) error {
	if err := c.check(""); err != nil {
		return err
	}
	res, err := c.b.retry.do(ctx, c.what("drop", ""), func(ctx context.Context) error {
		_, err := c.c.Delete(ctx, nil)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

func body(data []byte) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader(data)) }

// PutNew uploads with If-None-Match: *. If a try that may have gone
// through is followed by "exists", the blob is read back: identical
// content means the earlier try created it.
func (c *container) PutNew(ctx context.Context, name string, data []byte) error {
	what := c.what("put new", name)
	if err := c.check(name); err != nil {
		return err
	}
	bc := c.c.NewBlockBlobClient(name)
	opts := &blockblob.UploadOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)},
	}}
	res, err := c.b.retry.do(ctx, what, func(ctx context.Context) error {
		_, err := bc.Upload(ctx, body(data), opts)
		return err
	})
	if errors.Is(err, storage.ErrPreconditionFailed) {
		// Some service versions answer 412 rather than 409 to If-None-Match: *.
		err = fmt.Errorf("%w: azure: %s: blob exists", storage.ErrExists, what)
	}
	if err != nil && res.earlierMayHaveApplied && errors.Is(err, storage.ErrExists) {
		if got, gerr := c.Get(ctx, name); gerr == nil && bytes.Equal(got, data) {
			return nil
		}
	}
	return err
}

func (c *container) Put(ctx context.Context, name string, data []byte) error {
	if err := c.check(name); err != nil {
		return err
	}
	bc := c.c.NewBlockBlobClient(name)
	_, err := c.b.retry.do(ctx, c.what("put", name), func(ctx context.Context) error {
		_, err := bc.Upload(ctx, body(data), nil)
		return err
	})
	return err
}

// Upload reads r in blocks of storage.UploadBlockBytes, holding one block
// at a time. Up to storage.SingleUploadBytes in all it is one Put Blob;
// beyond that one Put Block per block and a Put Block List to commit
// them, as storage.Metered counts.
func (c *container) Upload(ctx context.Context, name string, r io.Reader) error {
	what := c.what("upload", name)
	if err := c.check(name); err != nil {
		return err
	}
	bc := c.c.NewBlockBlobClient(name)
	buf := make([]byte, storage.UploadBlockBytes)
	n, err := io.ReadFull(r, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return c.Put(ctx, name, buf[:n])
	case err != nil:
		return fmt.Errorf("azure: %s: reading the source: %w", what, err)
	}
	// A full first block: one byte more decides between Put Blob and blocks.
	var one [1]byte
	m, err := io.ReadFull(r, one[:])
	switch {
	case m == 0 && err == io.EOF:
		return c.Put(ctx, name, buf)
	case m == 0:
		return fmt.Errorf("azure: %s: reading the source: %w", what, err)
	}

	// Block IDs: this upload's own UUID, then the block's number. Blocks
	// staged by another upload of the same blob never share an ID with ours.
	prefix := uuid.New()
	var ids []string
	stage := func(data []byte) error {
		if len(ids) == maxBlocks {
			return invalid(what, "more than %d blocks of %d bytes", maxBlocks, storage.UploadBlockBytes)
		}
		var raw [20]byte
		copy(raw[:], prefix[:])
		binary.BigEndian.PutUint32(raw[16:], uint32(len(ids)))
		id := base64.StdEncoding.EncodeToString(raw[:])
		_, err := c.b.retry.do(ctx, what+": put block", func(ctx context.Context) error {
			_, err := bc.StageBlock(ctx, id, body(data), nil)
			return err
		})
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	}
	if err := stage(buf); err != nil {
		return err
	}
	buf[0] = one[0]
	fill := 1
	for {
		n, err := io.ReadFull(r, buf[fill:])
		total := fill + n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if total > 0 {
				if err := stage(buf[:total]); err != nil {
					return err
				}
			}
			break
		}
		if err != nil {
			return fmt.Errorf("azure: %s: reading the source: %w", what, err)
		}
		if err := stage(buf[:total]); err != nil {
			return err
		}
		fill = 0
	}
	// Committing the same list twice is harmless, so a retry is safe.
	_, err = c.b.retry.do(ctx, what+": put block list", func(ctx context.Context) error {
		_, err := bc.CommitBlockList(ctx, ids, nil)
		return err
	})
	return err
}

func (c *container) Get(ctx context.Context, name string) ([]byte, error) {
	if err := c.check(name); err != nil {
		return nil, err
	}
	bc := c.c.NewBlobClient(name)
	var data []byte
	_, err := c.b.retry.do(ctx, c.what("get", name), func(ctx context.Context) error {
		resp, err := bc.DownloadStream(ctx, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.ContentLength != nil && *resp.ContentLength >= 0 && *resp.ContentLength <= 1<<30 {
			data = make([]byte, 0, *resp.ContentLength)
		}
		buf := bytes.NewBuffer(data)
		_, err = buf.ReadFrom(resp.Body)
		data = buf.Bytes()
		return err
	})
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// Open is one ranged Get Blob whose body streams to the caller. A range
// that starts at or past the end of the blob reads as empty. length 0
// is one Get Blob Properties request, which checks that the blob exists.
func (c *container) Open(ctx context.Context, name string, offset, length int64) (io.ReadCloser, error) {
	what := c.what("open", name)
	if err := c.check(name); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, invalid(what, "negative offset %d", offset)
	}
	bc := c.c.NewBlobClient(name)
	if length == 0 {
		_, err := c.b.retry.do(ctx, what, func(ctx context.Context) error {
			_, err := bc.GetProperties(ctx, nil)
			return err
		})
		if err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	opts := &blob.DownloadStreamOptions{}
	if offset > 0 || length > 0 {
		opts.Range = blob.HTTPRange{Offset: offset, Count: max(length, 0)}
	}
	var rc io.ReadCloser
	_, err := c.b.retry.do(ctx, what, func(ctx context.Context) error {
		resp, err := bc.DownloadStream(ctx, opts)
		if err != nil {
			if status, _, _, ok := response(err); ok && status == http.StatusRequestedRangeNotSatisfiable {
				rc = io.NopCloser(strings.NewReader("")) // the blob exists; the range is past its end
				return nil
			}
			return err
		}
		rc = &bodyReader{ctx: ctx, rc: resp.Body, what: what, redact: c.b.cfg.redact}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// bodyReader converts the errors of a streamed body to the storage
// sentinels: a broken connection is ErrTransient.
type bodyReader struct {
	ctx    context.Context
	rc     io.ReadCloser
	what   string
	redact func(string) string
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if err != nil && err != io.EOF {
		if r.ctx.Err() != nil {
			err = fmt.Errorf("azure: %s: reading: %w", r.what, r.ctx.Err())
		} else {
			err = fmt.Errorf("%w: azure: %s: reading: %s", storage.ErrTransient, r.what, r.redact(err.Error()))
		}
	}
	return n, err
}

func (r *bodyReader) Close() error {
	_ = r.rc.Close()
	return nil
}

func (c *container) Delete(ctx context.Context, name string) error {
	if err := c.check(name); err != nil {
		return err
	}
	bc := c.c.NewBlobClient(name)
	res, err := c.b.retry.do(ctx, c.what("delete", name), func(ctx context.Context) error {
		_, err := bc.Delete(ctx, nil)
		return err
	})
	if res.earlierMayHaveApplied && errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// List pages through List Blobs, 5000 names a request.
func (c *container) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	what := c.what("list", "")
	if err := c.check(""); err != nil {
		return nil, err
	}
	if len(prefix) > 1024 {
		return nil, invalid(what, "prefix longer than 1024 bytes")
	}
	var out []storage.BlobInfo
	var marker *string
	for {
		var page []storage.BlobInfo
		var next *string
		_, err := c.b.retry.do(ctx, what, func(ctx context.Context) error {
			// A pager of its own per try, so that a retry asks for the same page.
			p := c.c.NewListBlobsFlatPager(&azcontainer.ListBlobsFlatOptions{
				Prefix: to.Ptr(prefix), MaxResults: to.Ptr(int32(listPageSize)), Marker: marker,
			})
			resp, err := p.NextPage(ctx)
			if err != nil {
				return err
			}
			page = page[:0]
			if resp.Segment != nil {
				for _, it := range resp.Segment.BlobItems {
					if it == nil || it.Name == nil {
						continue
					}
					var size int64
					if it.Properties != nil && it.Properties.ContentLength != nil {
						size = *it.Properties.ContentLength
					}
					page = append(page, storage.BlobInfo{Name: *it.Name, Size: size})
				}
			}
			next = resp.NextMarker
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == nil || *next == "" {
			break
		}
		marker = next
	}
	// Azure lists in its own collation; sort by bytes so every backend agrees.
	slices.SortFunc(out, func(a, b storage.BlobInfo) int { return strings.Compare(a.Name, b.Name) })
	if out == nil {
		out = []storage.BlobInfo{}
	}
	return out, nil
}

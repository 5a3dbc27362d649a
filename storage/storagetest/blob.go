package storagetest

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/reversi-cloud/reversi/storage"
)

func (e *env) get(c storage.Container, name string) []byte {
	e.Helper()
	data, err := c.Get(e.ctx, name)
	e.must(err, "get blob "+name)
	return data
}

func testBlobBasic(e *env) {
	c := e.container(e.b, "basic")
	e.must(c.Create(e.ctx), "create an existing container")
	e.must(c.PutNew(e.ctx, "a", []byte("first")), "put new")
	e.is(c.PutNew(e.ctx, "a", []byte("second")), storage.ErrExists, "put new over an existing blob")
	if got := e.get(c, "a"); string(got) != "first" {
		e.Errorf("get after a refused put new: %q, want first", got)
	}
	e.must(c.Put(e.ctx, "a", []byte("third")), "put over")
	if got := e.get(c, "a"); string(got) != "third" {
		e.Errorf("get after put: %q, want third", got)
	}
	e.must(c.Put(e.ctx, "empty", nil), "put empty")
	if got := e.get(c, "empty"); len(got) != 0 {
		e.Errorf("get empty blob: %q", got)
	}
	_, err := c.Get(e.ctx, "missing")
	e.is(err, storage.ErrNotFound, "get missing blob")
	_, err = c.Open(e.ctx, "missing", 0, -1)
	e.is(err, storage.ErrNotFound, "open missing blob")
	e.must(c.Delete(e.ctx, "a"), "delete")
	e.is(c.Delete(e.ctx, "a"), storage.ErrNotFound, "delete a deleted blob")
	_, err = c.Get(e.ctx, "a")
	e.is(err, storage.ErrNotFound, "get a deleted blob")
	e.must(c.PutNew(e.ctx, "a", []byte("again")), "put new after delete")
	e.must(c.Drop(e.ctx), "drop container")
	e.is(c.Drop(e.ctx), storage.ErrNotFound, "drop a dropped container")
}

func testBlobNotCreated(e *env) {
	c := e.b.Container(e.queueName("absent"))
	e.is(c.Put(e.ctx, "a", []byte("x")), storage.ErrNotFound, "put")
	e.is(c.PutNew(e.ctx, "a", []byte("x")), storage.ErrNotFound, "put new")
	e.is(c.Upload(e.ctx, "a", bytes.NewReader([]byte("x"))), storage.ErrNotFound, "upload")
	_, err := c.Get(e.ctx, "a")
	e.is(err, storage.ErrNotFound, "get")
	_, err = c.List(e.ctx, "")
	e.is(err, storage.ErrNotFound, "list")
	e.is(c.Drop(e.ctx), storage.ErrNotFound, "drop")
}

// pattern is a reproducible stream of n bytes, made as it is read, so a
// large upload never sits whole in memory. Byte i is patternByte(i).
type pattern struct{ off, n int64 }

func patternByte(i int64) byte { return byte(i%251) ^ byte(i>>20) }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if rest := p.n - p.off; int64(len(b)) > rest {
		b = b[:rest]
	}
	for i := range b {
		b[i] = patternByte(p.off + int64(i))
	}
	p.off += int64(len(b))
	return len(b), nil
}

// checkPattern checks that data is bytes off.. of the pattern.
func (e *env) checkPattern(data []byte, off int64, what string) {
	e.Helper()
	for i, b := range data {
		if want := patternByte(off + int64(i)); b != want {
			e.Errorf("%s: byte %d (blob offset %d) is %d, want %d", what, i, off+int64(i), b, want)
			return
		}
	}
}

// readRange opens and reads a range of a blob.
func (e *env) readRange(c storage.Container, name string, off, n int64) []byte {
	e.Helper()
	rc, err := c.Open(e.ctx, name, off, n)
	e.must(err, fmt.Sprintf("open %s at %d for %d", name, off, n))
	defer rc.Close()
	data, err := io.ReadAll(rc)
	e.must(err, fmt.Sprintf("read %s at %d for %d", name, off, n))
	return data
}

func testBlobUpload(e *env) {
	c := e.container(e.b, "upload")
	const size = 9 << 20 // over two blocks of storage.UploadBlockBytes
	e.must(c.Upload(e.ctx, "big", &pattern{n: size}), "upload 9 MiB")
	list, err := c.List(e.ctx, "big")
	e.must(err, "list")
	if len(list) != 1 || list[0].Size != size {
		e.Fatalf("list after upload: %+v, want big of %d bytes", list, size)
	}
	block := int64(storage.UploadBlockBytes)
	for _, r := range []struct{ off, n, want int64 }{
		{0, 100, 100},
		{block - 10, 20, 20},              // across the first block boundary
		{block - 1, block + 2, block + 2}, // the whole second block and a byte either side
		{size - 5, -1, 5},                 // to the end
		{size - 5, 100, 5},                // past the end: stops at the end
		{8 << 20, 1 << 20, 1 << 20},       // exactly the last MiB
	} {
		got := e.readRange(c, "big", r.off, r.n)
		if int64(len(got)) != r.want {
			e.Errorf("open at %d for %d: got %d bytes, want %d", r.off, r.n, len(got), r.want)
			continue
		}
		e.checkPattern(got, r.off, fmt.Sprintf("open at %d for %d", r.off, r.n))
	}
	whole := e.get(c, "big")
	if len(whole) != size {
		e.Fatalf("get: %d bytes, want %d", len(whole), size)
	}
	e.checkPattern(whole, 0, "get")

	// A small upload, overwriting.
	e.must(c.Upload(e.ctx, "big", bytes.NewReader([]byte("small now"))), "upload over")
	if got := e.get(c, "big"); string(got) != "small now" {
		e.Errorf("get after small upload: %q", got)
	}
	e.must(c.Upload(e.ctx, "nothing", bytes.NewReader(nil)), "upload empty")
	if got := e.get(c, "nothing"); len(got) != 0 {
		e.Errorf("get after empty upload: %q", got)
	}
}

func testBlobOpenRange(e *env) {
	c := e.container(e.b, "range")
	e.must(c.Put(e.ctx, "abc", []byte("abcdefghij")), "put")
	for _, r := range []struct {
		off, n int64
		want   string
	}{
		{0, -1, "abcdefghij"},
		{2, 3, "cde"},
		{9, 1, "j"},
		{5, 100, "fghij"},
		{3, -1, "defghij"},
	} {
		if got := string(e.readRange(c, "abc", r.off, r.n)); got != r.want {
			e.Errorf("open at %d for %d: %q, want %q", r.off, r.n, got, r.want)
		}
	}
}

func testBlobList(e *env) {
	c := e.container(e.b, "list")
	names := []string{"p/b", "p/a", "q/a", "p/c/d", "p", "pa", "ü/x"}
	for i, n := range names {
		e.must(c.Put(e.ctx, n, bytes.Repeat([]byte{'x'}, i)), "put "+n)
	}
	size := map[string]int64{}
	for i, n := range names {
		size[n] = int64(i)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"p", "p/a", "p/b", "p/c/d", "pa", "q/a", "ü/x"}},
		{"p/", []string{"p/a", "p/b", "p/c/d"}},
		{"p", []string{"p", "p/a", "p/b", "p/c/d", "pa"}},
		{"q/a", []string{"q/a"}},
		{"zz", nil},
	} {
		got, err := c.List(e.ctx, tc.prefix)
		e.must(err, "list "+tc.prefix)
		var gotNames []string
		for _, b := range got {
			gotNames = append(gotNames, b.Name)
			if b.Size != size[b.Name] {
				e.Errorf("list %q: %s has size %d, want %d", tc.prefix, b.Name, b.Size, size[b.Name])
			}
		}
		if !slices.Equal(gotNames, tc.want) {
			e.Errorf("list %q: %q, want %q", tc.prefix, gotNames, tc.want)
		}
	}
	e.must(c.Delete(e.ctx, "p/b"), "delete")
	got, err := c.List(e.ctx, "p/")
	e.must(err, "list after delete")
	if len(got) != 2 || got[0].Name != "p/a" || got[1].Name != "p/c/d" {
		e.Errorf("list after delete: %+v", got)
	}
}

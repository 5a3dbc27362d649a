package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/storage"
)

// TestDiskFull fills a small tmpfs: writes then fail with ErrNoSpace,
// naming the directory, nothing written before is damaged, and once
// there is room again the directory opens with every acknowledged write.
// Mounting needs root; elsewhere the test is skipped.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	mount := func(args ...string) error {
		out, err := exec.Command("mount", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mount %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := mount("-t", "tmpfs", "-o", "size=24m", "tmpfs", dir); err != nil {
		t.Skipf("cannot mount a small file system (needs root): %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	ctx := context.Background()
	cfg := Config{Dir: dir, Persist: true, MemoryBytes: MinMemoryBytes}
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // before the unmount
	// The default reserve would leave no room on so small a disk.
	b.space.reserve = 8 << 20
	c, tb := b.Container("full"), b.Table("full")
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tb.Create(ctx); err != nil {
		t.Fatal(err)
	}
	isFull := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("%s on a full disk: %v; want ErrNoSpace naming %s", what, err, dir)
		}
	}
	// A blob larger than the disk fails in its file, and leaves none.
	isFull("upload", c.Upload(ctx, "huge", bytes.NewReader(make([]byte, 32<<20))))
	blob := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 256<<10+i) }
	acked := 0
	for ; ; acked++ {
		err := c.Put(ctx, fmt.Sprint("b", acked), blob(acked))
		if err == nil {
			_, err = tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: fmt.Sprint(acked), Props: map[string]any{"B": incompressible(60000)}})
		}
		if err != nil {
			isFull("put", err)
			break
		}
		if acked > 1000 {
			t.Fatal("24 MiB never filled")
		}
	}
	if acked == 0 {
		t.Fatal("no write fitted")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := mount("-o", "remount,size=128m", dir); err != nil {
		t.Fatal(err)
	}
	b, err = Open(cfg)
	if err != nil {
		t.Fatalf("open once there is room: %v", err)
	}
	c, tb = b.Container("full"), b.Table("full")
	for i := range acked {
		if got, err := c.Get(ctx, fmt.Sprint("b", i)); (err != nil || !bytes.Equal(got, blob(i))) {
			t.Errorf("blob %d: %d bytes, %v", i, len(got), err)
		}
		if _, err := tb.Get(ctx, "p", fmt.Sprint(i)); err != nil {
			t.Errorf("row %d: %v", i, err)
		}
	}
	if _, err := c.Get(ctx, "huge"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the blob that did not fit: %v", err)
	}
	if err := c.Put(ctx, "after", blob(1)); err != nil {
		t.Errorf("write once there is room: %v", err)
	}
	t.Logf("%d writes fitted", acked)
}

// incompressible returns n random bytes, which the store cannot compress.
func incompressible(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return b
}

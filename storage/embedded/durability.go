package embedded

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Durability is what a write that returned success survives, with
// Config.Persist.
type Durability int

const (
	// SurviveProcessDeath (the default): every acknowledged write has
	// reached the kernel before the call returns (the store's log is
	// written, blob files are closed), so it survives the death of the
	// process at any instant: SIGKILL, the OOM killer, a panic. Nothing is
	// fsynced on the write path, which is what makes small writes cheap;
	// after a power failure or a kernel crash, recent writes may be lost.
	SurviveProcessDeath Durability = iota
	// SurvivePowerLoss fsyncs every write before it returns (concurrent
	// writers share one fsync), and blob files and their directories
	// before the record that publishes them.
	SurvivePowerLoss
)

func (d Durability) syncs() bool { return d == SurvivePowerLoss }

// kernelFS is the store's file system when writes need only reach the
// kernel: the store still waits for its log to be written before a
// commit returns, but its syncs are no-ops.
type kernelFS struct{ vfs.FS }

func (fs kernelFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return kernelFile(fs.FS.Create(name, c))
}

func (fs kernelFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return kernelFile(fs.FS.Open(name, opts...))
}

func (fs kernelFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return kernelFile(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs kernelFS) OpenDir(name string) (vfs.File, error) { return kernelFile(fs.FS.OpenDir(name)) }

func (fs kernelFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return kernelFile(fs.FS.ReuseForWrite(old, name, c))
}

type unsyncedFile struct{ vfs.File }

func kernelFile(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return unsyncedFile{f}, nil
}

func (unsyncedFile) Sync() error                { return nil }
func (unsyncedFile) SyncData() error            { return nil }
func (unsyncedFile) SyncTo(int64) (bool, error) { return true, nil }

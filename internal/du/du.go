// Package du measures the disk a directory's files take.
package du

import (
	"io/fs"
	"path/filepath"
)

// Bytes is the size of the regular files under dir; files that vanish
// while it walks, and a missing or empty dir, count nothing.
func Bytes(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

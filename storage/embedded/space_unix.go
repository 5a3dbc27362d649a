//go:build unix

package embedded

import "syscall"

// FreeSpace returns the bytes an unprivileged writer may still use on the
// file system holding dir.
func FreeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

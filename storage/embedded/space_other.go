//go:build !unix

package embedded

import "errors"

// FreeSpace is unknown where statfs is not available; writes then fail
// only when the disk does.
func FreeSpace(string) (uint64, error) { return 0, errors.New("free space unknown") }

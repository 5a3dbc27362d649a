//go:build !unix

package embedded

import (
	"os"
	"path/filepath"
)

// lockDir only marks the directory where file locks are not available.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "embedded.lock"), os.O_RDWR|os.O_CREATE, 0o600)
}

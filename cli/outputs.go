package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writableFile checks, before the work starts, that the file a flag
// names can be written at the end: a report or a heap profile that
// fails to write after a run of hours loses what the run was for. It
// creates and removes a file beside it; "" (the flag not given) passes.
func writableFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("-%s %s: is a directory; name a file", flag, path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".reversi-write-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usagef("-%s %s: cannot write in %s: %v", flag, path, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

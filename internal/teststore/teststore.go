// Package teststore opens the storage that tests in several packages
// run against. It is apart from testkit so that tests which need no
// storage (board's, solve's, packed's) build without the store and its
// dependencies, most of the packages a build compiles: what make test's
// vets of other architectures and instruction sets compile first on a
// new machine.
package teststore

import (
	"testing"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// Embedded opens a metered embedded backend in a directory of the test's
// own, closed when the test ends.
func Embedded(t testing.TB) *storage.Metered {
	t.Helper()
	be, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return storage.NewMetered(be)
}

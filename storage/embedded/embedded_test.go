package embedded_test

import (
	"testing"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

func TestConformance(t *testing.T) {
	for _, mode := range []struct {
		name    string
		memory  int64
		persist bool
	}{
		{"Memory", 0, false},    // small blobs in memory, the default
		{"Files", -1, false},    // every blob in a file
		{"Persistent", 0, true}, // state kept in the directory
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			storagetest.Run(t, func(t *testing.T) storage.Backend {
				b, err := embedded.Open(embedded.Config{Dir: t.TempDir(), MemoryBytes: mode.memory, Persist: mode.persist})
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
		})
	}
}

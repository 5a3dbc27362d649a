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
		inline  int64
		persist bool
	}{
		{"Memory", 0, false},    // small blobs in the store, nothing synced: the default
		{"Files", -1, false},    // every blob in a file
		{"Persistent", 0, true}, // every write synced
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			storagetest.Run(t, func(t *testing.T) storage.Backend {
				b, err := embedded.Open(embedded.Config{Dir: t.TempDir(), MaxInlineBlob: mode.inline, Persist: mode.persist})
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
		})
	}
}

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
		spill   bool
		sync    embedded.Durability
	}{
		{"Memory", 0, false, false, 0},                        // small blobs in the store, nothing synced: the default
		{"Files", -1, false, false, 0},                        // every blob in a file
		{"Spilled", 0, false, true, 0},                        // the store's files in a temporary directory
		{"Persistent", 0, true, false, 0},                     // every write reaches the kernel
		{"Synced", 0, true, false, embedded.SurvivePowerLoss}, // every write fsynced
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			storagetest.Run(t, func(t *testing.T) storage.Backend {
				b, err := embedded.Open(embedded.Config{Dir: t.TempDir(), MaxInlineBlob: mode.inline, Persist: mode.persist, SpillToDisk: mode.spill, Durability: mode.sync})
				if err != nil {
					t.Fatal(err)
				}
				return b
			})
		})
	}
}

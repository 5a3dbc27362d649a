package embedded_test

import (
	"testing"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/embedded"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		b, err := embedded.Open(embedded.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

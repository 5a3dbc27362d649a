package azure_test

import (
	"testing"

	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
	"github.com/reversi-cloud/reversi/storage/storagetest"
)

// TestConformance holds the Azure backend, on Azurite, to the suite every
// backend passes.
func TestConformance(t *testing.T) {
	azuretest.Config(t) // skip or fail early without Azurite
	storagetest.Run(t, func(t *testing.T) storage.Backend { return azuretest.Open(t) })
}

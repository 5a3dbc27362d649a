// Package azuretest opens the Azure backend on the storage account named
// by AZURE_STORAGE_CONNECTION_STRING (Azurite, started by make test), for
// the tests of any package.
//
// Without the variable a test is skipped, unless REVERSI_REQUIRE_AZURITE=1
// (as make test and CI set it), where it fails: a run that was meant to
// reach Azurite must not pass by skipping.
package azuretest

import (
	"context"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/reversi-cloud/reversi/storage/azure"
)

// EnvRequire names the variable that turns a missing connection string
// from a skip into a failure.
const EnvRequire = "REVERSI_REQUIRE_AZURITE"

// Config returns the configuration from the environment, or skips (or
// fails, under REVERSI_REQUIRE_AZURITE=1) the test.
func Config(t testing.TB) azure.Config {
	t.Helper()
	cs := os.Getenv(azure.EnvConnectionString)
	if cs == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s not set but %s=1; run make test to start Azurite", azure.EnvConnectionString, EnvRequire)
		}
		t.Skipf("%s not set; run make test to start Azurite", azure.EnvConnectionString)
	}
	return azure.Config{ConnectionString: cs}
}

// Open opens a backend on the account from the environment and closes it
// when the test ends.
func Open(t testing.TB) *azure.Backend {
	t.Helper()
	return OpenConfig(t, Config(t))
}

// OpenConfig opens a backend with cfg and closes it when the test ends.
func OpenConfig(t testing.TB, cfg azure.Config) *azure.Backend {
	t.Helper()
	b, err := azure.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("azure.Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Name returns a fresh name valid for queues, containers and tables
// alike (lowercase letters and digits, starting with a letter), so that
// tests sharing one account do not collide: prefix (lowercased, stripped
// to letters and digits, at most 40 characters) and 16 hex digits of a random UUID.
func Name(prefix string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(prefix) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	p := b.String()
	if p == "" || p[0] < 'a' || p[0] > 'z' {
		p = "t" + p
	}
	if len(p) > 40 {
		p = p[:40]
	}
	u := uuid.New()
	return p + hex.EncodeToString(u[:8])
}

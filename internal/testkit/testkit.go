// Package testkit holds small helpers that tests in several packages share.
package testkit

import (
	"bytes"
	"sync"
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

// Buffer is a bytes.Buffer that several goroutines may write at once, as
// worker loops logging to one handler do.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

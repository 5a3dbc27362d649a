package du

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBytes(t *testing.T) {
	dir := t.TempDir()
	if got := Bytes(dir); got != 0 {
		t.Fatalf("empty dir: %d", got)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a"), make([]byte, 100), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub", "deeper", "b"), make([]byte, 23), 0o644))
	if got := Bytes(dir); got != 123 {
		t.Errorf("Bytes = %d, want 123", got)
	}
	if got := Bytes(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("missing dir: %d", got)
	}
	if got := Bytes(""); got != 0 {
		t.Errorf("no dir: %d", got)
	}
}

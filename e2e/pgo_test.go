package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestPipelineProfiles checks the profiles go build optimises the
// pipeline's commands with (make pipeline-pgo): cmd/enumerate and
// cmd/worker run the same handlers, so they carry the same file, and it
// is a CPU profile of the pipeline's hot paths, whose function names its
// string table holds.
func TestPipelineProfiles(t *testing.T) {
	root := repoRoot(t)
	read := func(cmd string) []byte {
		b, err := os.ReadFile(filepath.Join(root, "cmd", cmd, "default.pgo"))
		if err != nil {
			t.Fatalf("%v (make pipeline-pgo writes it)", err)
		}
		return b
	}
	enumerate, worker := read("enumerate"), read("worker")
	if !bytes.Equal(enumerate, worker) {
		t.Fatal("cmd/enumerate/default.pgo and cmd/worker/default.pgo differ: make pipeline-pgo writes both")
	}
	zr, err := gzip.NewReader(bytes.NewReader(enumerate))
	if err != nil {
		t.Fatalf("cmd/enumerate/default.pgo is not a gzipped pprof profile: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("cmd/enumerate/default.pgo: %v", err)
	}
	for _, fn := range []string{
		"github.com/reversi-cloud/reversi/board.(*Board).ChildrenTerminal",
		"github.com/reversi-cloud/reversi/expand.(*edgeSorter).scatter",
		"github.com/reversi-cloud/reversi/packed.(*EdgeWriter).AddWords",
		"github.com/reversi-cloud/reversi/dedup.Merge",
		"github.com/reversi-cloud/reversi/dedup.(*output).emit",
	} {
		if !bytes.Contains(raw, []byte(fn)) {
			t.Errorf("cmd/enumerate/default.pgo has no samples in %s: not a profile of this pipeline (make pipeline-pgo remakes it)", fn)
		}
	}
}

package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage/embedded"
)

// TestSeedDeletes: seed -delete drops a complete run's queues, container
// and tables, after which no command finds it; a run that is not
// complete is refused in one line unless -force is given; the flags of
// a seed are refused beside -delete.
func TestSeedDeletes(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCmd(t, Enumerate, "-data", dir, "-run", "done", "-board", "4", "-plies", "5", "-quiet"); code != ExitOK {
		t.Fatalf("enumerate: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, Seed, "-data", dir, "-run", "part", "-board", "4", "-plies", "5", "-queue-shards", "2"); code != ExitOK {
		t.Fatalf("seed: exit %d: %s", code, stderr)
	}
	left := func(run string, shards int) []string {
		t.Helper()
		be, err := embedded.Open(embedded.Config{Dir: dir, Persist: true})
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		cfg := pipeline.RunConfig{Name: run, Config: runstore.Config{QueueShards: shards, CompensationShards: shards, Accounts: 1, StateAccounts: 1}}
		l, err := pipeline.Remains(context.Background(), be, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := left("part", 2); len(l) < 7 {
		t.Fatalf("a seeded run has only %v", l)
	}

	code, _, stderr := runCmd(t, Seed, "-data", dir, "-run", "part", "-delete")
	if code != ExitFail || !strings.Contains(stderr, "run part is not complete; add -force") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("deleting a run that is not complete: exit %d, %q", code, stderr)
	}
	if l := left("part", 2); len(l) < 7 {
		t.Errorf("a refused delete left only %v", l)
	}
	for _, tc := range []struct {
		run   string
		extra []string
		want  string
	}{
		{"done", nil, "run done deleted: work queue done-work, 1 compensation queues, the poison queue, blob container done and 2 tables"},
		{"part", []string{"-force"}, "run part deleted: work queues part-work, part-work-1, 2 compensation queues"},
	} {
		code, stdout, stderr := runCmd(t, Seed, append([]string{"-data", dir, "-run", tc.run, "-delete"}, tc.extra...)...)
		if code != ExitOK || !strings.HasPrefix(stdout, tc.want) {
			t.Errorf("seed -delete %s %v: exit %d, %q, %q; want %q", tc.run, tc.extra, code, stdout, stderr, tc.want)
		}
		if l := left(tc.run, 2); len(l) > 0 {
			t.Errorf("run %s: %v left after seed -delete", tc.run, l)
		}
		for _, after := range []struct {
			cmd  func(Env) int
			args []string
		}{{Inspect, nil}, {Seed, []string{"-delete"}}} {
			code, _, stderr := runCmd(t, after.cmd, append([]string{"-data", dir, "-run", tc.run}, after.args...)...)
			if code == ExitOK || !strings.Contains(stderr, "no run "+tc.run) {
				t.Errorf("after the delete: exit %d, %q; want no run %s", code, stderr, tc.run)
			}
		}
	}
}

//go:build linux

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/reference"
	"github.com/reversi-cloud/reversi/report"
)

// mountTmpfs mounts a tmpfs of size MiB on a fresh directory, unmounted
// at the end of the test, and returns it with a function that resizes it.
// It skips the test where mounting is impossible (not root, no tmpfs).
func mountTmpfs(t *testing.T, size int) (string, func(size int)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := t.TempDir()
	mount := func(args ...string) error {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("mount %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := mount("-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", size), "tmpfs", dir); err != nil {
		t.Skipf("cannot mount a small file system: %v", err)
	}
	// Registered after TempDir, so it runs before the removal.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir, func(size int) {
		t.Helper()
		if err := mount("-o", fmt.Sprintf("remount,size=%dm", size), dir); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEnumerateDiskFull runs enumerate -data on a tmpfs too small for
// the run: it must stop in one line that names the directory, the space
// free and the space needed, and the command that resumes it. What was
// written before must be intact (the plies complete so far read back
// with the reference's counts), and once the file system is larger the
// same command must finish with the reference's counts and, after the
// compensation messages of the interrupted tasks are handled, check
// clean. Mounting needs root; elsewhere the test is skipped.
func TestEnumerateDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	// The store refuses writes while less than 96 MiB are free (room for
	// its memtables and compactions), and the run, its write-ahead log
	// included, needs more than the 54 MiB left of 150 MiB (it filled
	// during ply 9 on 2026-11-26), so 150 MiB holds part of it, and 512
	// MiB all of it.
	mnt, resize := mountTmpfs(t, 150)
	bin := binaries(t)
	const size, target = 8, 10
	data := filepath.Join(mnt, "data")
	args := []string{"-data", data, "-run", "full", "-plies", fmt.Sprint(target), "-visibility", "2s"}

	p := startEnumerate(t, bin, args...)
	code, lines, err := p.wait()
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || len(lines) != 1 {
		t.Fatalf("on a full disk: exit %d with %d lines on stderr, want 1 and one line:\n%s", code, len(lines), strings.Join(lines, "\n"))
	}
	line := lines[0]
	t.Log(line)
	for _, want := range []string{"enumerate: embedded: " + data + ": out of disk space", "MiB are needed", "resume with: enumerate -data " + data + " -run full -board 8 -plies 10 "} {
		if !strings.Contains(line, want) {
			t.Errorf("the full-disk line lacks %q", want)
		}
	}

	ref, err := reference.Enumerate(board.MustNew(size), target)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing written is damaged: the plies complete before the disk
	// filled read back exactly.
	path := filepath.Join(t.TempDir(), "partial.json")
	if out, err := command(bin, "inspect", "-data", data, "-run", "full", "-json", path).CombinedOutput(); err != nil {
		t.Fatalf("inspect after the full disk: %v\n%s", err, out)
	}
	partial := readReport(t, path)
	if partial.Complete {
		t.Fatal("the run is complete after the full disk; the file system was not small enough")
	}
	t.Logf("plies 0-%d were complete when the disk filled", len(partial.Plies)-1)
	sameEnumerated(t, partial.Plies, ref.Report.Plies)

	resize(512)
	path = filepath.Join(t.TempDir(), "resumed.json")
	p = startEnumerate(t, bin, append(args, "-json", path)...)
	if code, lines, err := p.wait(); code != 0 || err != nil {
		t.Fatalf("the same command with room: exit %d, %v\n%s", code, err, strings.Join(lines, "\n"))
	}
	sameCounts(t, readReport(t, path), ref.Report, "")
	if out, err := command(bin, "worker", "-data", data, "-run", "full", "-exit-when-done", "-visibility", "2s", "-log-level", "warn").CombinedOutput(); err != nil {
		t.Fatalf("draining worker: %v\n%s", err, out)
	}
	if out, err := command(bin, "inspect", "-data", data, "-run", "full", "-check").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "check clean: ") {
		t.Errorf("inspect -check after draining: %v\n%s", err, out)
	}
}

// sameEnumerated wants every ply of got, a run not yet complete, to have
// the positions, terminal positions and edges of the same ply in want
// (results are decided only once the target ply is complete).
func sameEnumerated(t *testing.T, got, want []report.Ply) {
	t.Helper()
	for i, g := range got {
		w := want[i]
		if [3]int64{g.Positions, g.Terminal, g.Edges} != [3]int64{w.Positions, w.Terminal, w.Edges} {
			t.Errorf("ply %d: %d positions, %d terminal, %d edges; reference %d, %d, %d", i, g.Positions, g.Terminal, g.Edges, w.Positions, w.Terminal, w.Edges)
		}
	}
}

// TestEnumerateRefusesTooLittleDisk asks for 8x8 ply 13 in a directory on
// a 64 MiB file system: enumerate must refuse before it starts, in one
// line with its estimate and the space free.
func TestEnumerateRefusesTooLittleDisk(t *testing.T) {
	mnt, _ := mountTmpfs(t, 64)
	bin := binaries(t)
	data := filepath.Join(mnt, "data")
	p := startEnumerate(t, bin, "-data", data, "-run", "deep", "-plies", "13")
	code, lines, err := p.wait()
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || len(lines) != 1 {
		t.Fatalf("exit %d with %d lines on stderr, want 1 and one line:\n%s", code, len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{"8x8 to ply 13 needs about", "GB of disk", data + " has 67.1 MB free"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line lacks %q:\n%s", want, lines[0])
		}
	}
	// Refused before the store is opened: nothing is left behind.
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run left %s behind (%v)", data, err)
	}
}

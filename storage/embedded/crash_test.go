package embedded

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// The crash test runs the test binary again as a child that writes to a
// persistent directory and reports each write that returned success on
// its standard output; the parent kills it with SIGKILL once it has
// reported enough, then checks that the next Open finds every reported
// write and nothing half done.
const (
	crashDirEnv   = "EMBEDDED_CRASH_DIR"
	crashStartEnv = "EMBEDDED_CRASH_START"
	crashRounds   = 3
	crashAcks     = 120 // writes reported before each kill
)

// crashBlob is the content of blob i: some inline, some in files.
func crashBlob(i int) []byte {
	n := 100
	if i%3 == 0 {
		n = 3 * DefaultMaxInlineBlob
	}
	return bytes.Repeat([]byte{byte(i)}, n+i)
}

// TestCrashChild is the child's side of TestCrashSafety; it does nothing
// when run on its own.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only run as TestCrashSafety's child")
	}
	start, _ := strconv.Atoi(os.Getenv(crashStartEnv))
	ctx := context.Background()
	b, err := Open(Config{Dir: dir, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	tb, q, c := b.Table("crash"), b.Queue("crash"), b.Container("crash")
	for _, r := range []interface{ Create(context.Context) error }{tb, q, c} {
		if err := r.Create(ctx); err != nil {
			t.Fatal(err)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	for i := start; ; i++ {
		key := strconv.Itoa(i)
		var err error
		switch i % 5 {
		case 0:
			_, err = tb.Add(ctx, storage.Entity{PartitionKey: "p" + strconv.Itoa(i%7), RowKey: key, Props: map[string]any{"I": int64(i)}})
		case 1:
			ops := make([]storage.Op, 10)
			for j := range ops {
				ops[j] = storage.Op{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "tx", RowKey: key + "-" + strconv.Itoa(j), Props: map[string]any{"J": int64(j)}}}
			}
			_, err = tb.Transact(ctx, "tx", ops)
		case 2:
			_, err = q.Enqueue(ctx, "m"+key, storage.EnqueueOptions{})
			if err == nil {
				// Hold a lease the parent must find ended.
				_, err = q.Dequeue(ctx, 1, time.Hour)
			}
		case 3:
			_, err = q.Enqueue(ctx, "d"+key, storage.EnqueueOptions{Delay: time.Hour})
		case 4:
			err = c.Put(ctx, "b"+key, crashBlob(i))
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(out, i)
		out.Flush()
	}
}

func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	acked := -1 // the last write any child reported
	delayed := 0
	for round := range crashRounds {
		start := round * 1_000_000
		cmd := exec.Command(exe, "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStartEnv+"="+strconv.Itoa(start))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		n := 0
		for n < crashAcks && lines.Scan() {
			if acked, err = strconv.Atoi(lines.Text()); err != nil {
				t.Fatalf("child said %q", lines.Text())
			}
			n++
		}
		cmd.Process.Kill() // SIGKILL, in the middle of the next write
		cmd.Wait()
		if n < crashAcks {
			t.Fatalf("round %d: child reported %d writes, then stopped", round, n)
		}
		// Debris a crash can leave at any point: a file being written, a
		// container directory not yet registered.
		plant := func(path string) {
			if err := os.WriteFile(path, []byte("partial"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		stray := filepath.Join(dir, blobDir, "ffffffffffff")
		if err := os.Mkdir(stray, 0o700); err != nil {
			t.Fatal(err)
		}
		plant(filepath.Join(stray, "1"))
		delayed = verifyCrash(t, dir, start, acked, delayed, func(c *container) { plant(c.path(1<<62 + 1)) })
		if _, err := os.Stat(stray); !os.IsNotExist(err) {
			t.Errorf("round %d: stray directory survived Open: %v", round, err)
		}
	}
}

// verifyCrash opens dir after a child's crash and checks the writes it
// reported, start to acked, and the consistency of what is stored.
// It returns the number of delayed messages held.
func verifyCrash(t *testing.T, dir string, start, acked, prevDelayed int, plant func(*container)) (delayed int) {
	t.Helper()
	ctx := context.Background()
	// Plant an unnamed file in the container, then open again.
	b, err := Open(Config{Dir: dir, Persist: true})
	if err != nil {
		t.Fatalf("open after SIGKILL: %v", err)
	}
	v, ok := b.containers.Load("crash")
	if !ok {
		t.Fatal("container created before the first report is gone")
	}
	plant(v.(*container))
	b.Close()
	b, err = Open(Config{Dir: dir, Persist: true})
	if err != nil {
		t.Fatalf("open again: %v", err)
	}
	defer b.Close()
	tb, q, c := b.Table("crash"), b.Queue("crash"), b.Container("crash")
	for i := start; i <= acked; i++ {
		key := strconv.Itoa(i)
		var err error
		switch i % 5 {
		case 0:
			var e storage.Entity
			e, err = tb.Get(ctx, "p"+strconv.Itoa(i%7), key)
			if err == nil && e.Props["I"] != int64(i) {
				err = fmt.Errorf("props %v", e.Props)
			}
		case 1:
			var page storage.Page
			page, err = tb.Query(ctx, "tx", storage.QueryOptions{From: key + "-", To: key + "."})
			if err == nil && len(page.Entities) != 10 {
				err = fmt.Errorf("%d of 10 rows", len(page.Entities))
			}
		case 4:
			var data []byte
			data, err = c.Get(ctx, "b"+key)
			if err == nil && !bytes.Equal(data, crashBlob(i)) {
				err = fmt.Errorf("%d bytes, not what was written", len(data))
			}
		}
		if err != nil {
			t.Errorf("write %d, reported before the kill: %v", i, err)
		}
	}
	// Every message is visible at once, leased ones included, except
	// those enqueued with a delay.
	var visible int
	seen := map[string]bool{}
	for {
		msgs, err := q.Dequeue(ctx, storage.MaxDequeue, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.Text[0] == 'd' {
				t.Errorf("message %s, enqueued with a delay, is visible", m.Text)
			}
			seen[m.Text] = true
			visible++
		}
	}
	for i := start; i <= acked; i++ {
		if i%5 == 2 && !seen["m"+strconv.Itoa(i)] {
			t.Errorf("message m%d, enqueued and leased before the kill, is not visible", i)
		}
	}
	n, err := q.ApproximateLength(ctx)
	if err != nil {
		t.Fatal(err)
	}
	delayed = n - visible
	if want := prevDelayed + countDelayed(start, acked); delayed < want || delayed > want+1 {
		t.Errorf("%d delayed messages, want %d (or one more, written but not reported)", delayed, want)
	}
	// The container holds a file for each blob in a file, and no other.
	v, _ = b.containers.Load("crash")
	files, _ := os.ReadDir(v.(*container).dir)
	list, err := c.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	inFiles := 0
	for _, bl := range list {
		if bl.Size > DefaultMaxInlineBlob {
			inFiles++
		}
	}
	if len(files) != inFiles {
		t.Errorf("%d blob files for %d blobs in files", len(files), inFiles)
	}
	return delayed
}

// countDelayed counts the delayed messages enqueued by writes start to acked.
func countDelayed(start, acked int) int {
	n := 0
	for i := start; i <= acked; i++ {
		if i%5 == 3 {
			n++
		}
	}
	return n
}

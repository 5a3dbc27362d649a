package azure

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/storage"
)

// TestAzuriteRestart runs a private Azurite with its data on disk
// (scripts/azurite.sh start --location), stops it, and calls every
// service while it is down; it comes back on the same ports a moment
// later. The calls must ride out the outage on their retries, and the
// data written before must still be there.
func TestAzuriteRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts an emulator")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "azurite.sh")
	if _, err := os.Stat(filepath.Join(root, ".tools", "azurite", "node_modules", ".bin", "azurite")); err != nil {
		if os.Getenv("REVERSI_REQUIRE_AZURITE") == "1" {
			t.Fatalf("Azurite is not installed in .tools/azurite (scripts/azurite.sh install)")
		}
		t.Skip("Azurite is not installed in .tools/azurite; run make test")
	}
	state, data := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "AZURITE_STATE_DIR="+state)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("azurite.sh %v: %v\n%s", args, err, stderr.String())
		}
		return string(out)
	}
	out := run("start", "--location", data)
	t.Cleanup(func() { run("stop") })
	m := regexp.MustCompile(`AZURE_STORAGE_CONNECTION_STRING='([^']+)'`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no connection string in %q", out)
	}
	// Enough patience for a restart of a few seconds.
	b := openBackend(t, Config{ConnectionString: m[1], Retry: RetryConfig{
		MaxAttempts: 40, BaseDelay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond, TryTimeout: 10 * time.Second}})
	ctx := context.Background()
	c, q, tb := b.Container("restart"), b.Queue("restart"), b.Table("restart")
	for _, err := range []error{c.Create(ctx), q.Create(ctx), tb.Create(ctx)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Put(ctx, "before", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "before", Props: map[string]any{"N": int64(7)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(ctx, "before", storage.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}

	run("stop")
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(1500 * time.Millisecond)
		cmd := exec.Command("bash", script, "restart")
		cmd.Env = append(os.Environ(), "AZURITE_STATE_DIR="+state)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("restart: %v\n%s", err, out)
		}
	}()
	start := time.Now()
	if err := c.Put(ctx, "during", []byte("x")); err != nil {
		t.Errorf("put while Azurite restarts: %v", err)
	}
	waited := time.Since(start)
	<-restarted
	if waited < time.Second {
		t.Errorf("the put returned after %v, before Azurite was back", waited)
	}
	if _, err := tb.Upsert(ctx, storage.Entity{PartitionKey: "p", RowKey: "during"}); err != nil {
		t.Errorf("upsert after the restart: %v", err)
	}
	if _, err := q.Enqueue(ctx, "during", storage.EnqueueOptions{}); err != nil {
		t.Errorf("enqueue after the restart: %v", err)
	}

	if got, err := c.Get(ctx, "before"); err != nil || string(got) != "kept" {
		t.Errorf("blob written before the restart: %q, %v", got, err)
	}
	if got, err := tb.Get(ctx, "p", "before"); err != nil || got.Props["N"] != int64(7) {
		t.Errorf("entity written before the restart: %+v, %v", got, err)
	}
	if n, err := q.ApproximateLength(ctx); err != nil || n != 2 {
		t.Errorf("queue length after the restart: %d, %v; want 2", n, err)
	}
}

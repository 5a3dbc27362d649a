package cli

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reversi-cloud/reversi/internal/testkit"
	"github.com/reversi-cloud/reversi/storage/azure"
	"github.com/reversi-cloud/reversi/storage/azure/azuretest"
)

// secretRun runs a command with AZURE_STORAGE_CONNECTION_STRING set to cs
// and returns its exit code and everything it printed.
func secretRun(cmd func(Env) int, cs string, args ...string) (int, string) {
	var out testkit.Buffer
	env := Env{Args: args, Stdout: &out, Stderr: &out, Getenv: func(k string) string {
		if k == azure.EnvConnectionString {
			return cs
		}
		return ""
	}}
	code := cmd(env)
	return code, out.String()
}

// accountKey is the AccountKey value of a connection string.
func accountKey(t *testing.T, cs string) string {
	t.Helper()
	for _, part := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(k, "AccountKey") {
			return v
		}
	}
	t.Fatalf("connection string has no AccountKey")
	return ""
}

// noSecrets fails if out holds the key or the connection string, whole or
// in part (any 16 characters of the key, which is what a truncated or
// wrapped message would leak).
func noSecrets(t *testing.T, what, out, cs, key string) {
	t.Helper()
	for _, secret := range []string{cs, key, "AccountKey="} {
		if strings.Contains(out, secret) {
			t.Errorf("%s: output holds %.20q...:\n%s", what, secret, out)
			return
		}
	}
	for i := 0; i+16 <= len(key); i++ {
		if strings.Contains(out, key[i:i+16]) {
			t.Errorf("%s: output holds part of the account key (%q):\n%s", what, key[i:i+16], out)
			return
		}
	}
}

// TestNoSecretsInOutput runs seed, worker (debug logs, text and JSON),
// inspect, inspect -check and enumerate against Azurite with its real
// connection string, then every command against a wrong key, an
// unreachable endpoint and malformed connection strings, and checks that
// no output, log line or error holds the account key or the connection
// string.
func TestNoSecretsInOutput(t *testing.T) {
	cs := azuretest.Config(t).ConnectionString
	key := accountKey(t, cs)
	run := fmt.Sprintf("sec%d", time.Now().UnixNano()%1e9)
	dir := t.TempDir()

	// A working run, from seed to inspect, with every log at debug level.
	for _, step := range []struct {
		name string
		cmd  func(Env) int
		args []string
		code int
	}{
		{"seed", Seed, []string{"-run", run, "-board", "4", "-plies", "5"}, ExitOK},
		{"worker text", Worker, []string{"-run", run, "-exit-when-done", "-log-level", "debug", "-log-format", "text", "-visibility", "10s"}, ExitOK},
		{"worker json", Worker, []string{"-run", run, "-exit-when-done", "-log-level", "debug", "-log-format", "json"}, ExitOK},
		{"inspect", Inspect, []string{"-run", run, "-json", filepath.Join(dir, "r.json")}, ExitOK},
		{"inspect -check", Inspect, []string{"-run", run, "-check"}, ExitOK},
		{"inspect unknown run", Inspect, []string{"-run", "nosuchrun"}, ExitFail},
		{"worker unknown run", Worker, []string{"-run", "nosuchrun", "-log-level", "debug"}, ExitFail},
		{"enumerate", Enumerate, []string{"-storage", "azure", "-board", "4", "-plies", "4", "-log-level", "debug", "-workers", "2"}, ExitOK},
	} {
		code, out := secretRun(step.cmd, cs, step.args...)
		if code != step.code {
			t.Errorf("%s: exit %d, want %d:\n%s", step.name, code, step.code, out)
		}
		noSecrets(t, step.name, out, cs, key)
		t.Logf("%s: %d bytes of output", step.name, len(out))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil {
		t.Error(err)
	} else {
		noSecrets(t, "inspect -json file", string(b), cs, key)
	}

	// Error paths: a key Azurite refuses, an endpoint nothing listens on
	// (requests are retried, then fail), and malformed connection strings.
	fakeKey := base64.StdEncoding.EncodeToString([]byte("not the key, but 64 bytes long so it looks like one of them!!!!!"))
	wrongKey := strings.Replace(cs, key, fakeKey, 1)
	unreachable := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + fakeKey +
		";BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;QueueEndpoint=http://127.0.0.1:1/devstoreaccount1;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;"
	for _, bad := range []struct{ name, cs, key string }{
		{"wrong key", wrongKey, fakeKey},
		{"unreachable", unreachable, fakeKey},
		{"key not base64", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + fakeKey[:30] + "!!*;BlobEndpoint=http://127.0.0.1:1/a", fakeKey[:30]},
		{"no account name", "AccountKey=" + fakeKey + ";BlobEndpoint=http://127.0.0.1:1/a", fakeKey},
		{"garbage", "AccountKey" + fakeKey + "QueueEndpoint", fakeKey},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				name string
				cmd  func(Env) int
				args []string
			}{
				{"seed", Seed, []string{"-run", run + "x", "-board", "4"}},
				{"worker", Worker, []string{"-run", run, "-log-level", "debug", "-exit-when-done"}},
				{"inspect", Inspect, []string{"-run", run, "-check"}},
			} {
				if bad.name == "unreachable" && c.name != "seed" {
					continue // each call retries for several seconds; one command shows the path
				}
				code, out := secretRun(c.cmd, bad.cs, c.args...)
				if code == ExitOK {
					t.Errorf("%s: exit 0 with a bad connection string:\n%s", c.name, out)
				}
				if strings.Count(strings.TrimSpace(out), "\n") > 0 && c.name != "worker" {
					t.Errorf("%s: want one error line:\n%s", c.name, out)
				}
				noSecrets(t, c.name, out, bad.cs, bad.key)
				t.Logf("%s: %.300s", c.name, out)
			}
		})
	}
}

package azure

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The tests of this file's package cannot import azuretest (it imports
// this package), so they read the environment the same way themselves.

func azuriteConnString(t *testing.T) string {
	t.Helper()
	cs := os.Getenv(EnvConnectionString)
	if cs == "" {
		if os.Getenv("REVERSI_REQUIRE_AZURITE") == "1" {
			t.Fatalf("%s not set but REVERSI_REQUIRE_AZURITE=1; run make test to start Azurite", EnvConnectionString)
		}
		t.Skipf("%s not set; run make test to start Azurite", EnvConnectionString)
	}
	return cs
}

// fastRetry keeps the retry tests quick.
var fastRetry = RetryConfig{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, TryTimeout: 5 * time.Second}

func openBackend(t *testing.T, cfg Config) *Backend {
	t.Helper()
	b, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func uniqueName(prefix string) string {
	u := uuid.New()
	return prefix + hex.EncodeToString(u[:6])
}

// fault says what a faultProxy does with one request.
type fault int

const (
	pass        fault = iota // forward, return the answer
	lose                     // forward, then drop the connection: the request took effect, the answer is lost
	refuse                   // drop the connection without forwarding: no effect
	unavailable              // answer 503 without forwarding
	internal                 // answer 500 without forwarding
	timedOut                 // answer 500 OperationTimedOut without forwarding
)

// faultProxy stands between the backend and Azurite and breaks the
// requests its rule picks.
type faultProxy struct {
	target *url.URL
	srv    *httptest.Server

	mu   sync.Mutex
	rule func(r *http.Request, n int) fault // n counts the requests the rule has seen, from 0
	seen int
	log  []string // "METHOD path" of every request

	requests atomic.Int64
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{target: u}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// setRule installs rule; nil passes everything.
func (p *faultProxy) setRule(rule func(r *http.Request, n int) fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.seen = rule, 0
	p.log = nil
	p.requests.Store(0)
}

func (p *faultProxy) calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	p.mu.Lock()
	p.log = append(p.log, r.Method+" "+r.URL.Path)
	f := pass
	if p.rule != nil {
		f = p.rule(r, p.seen)
		p.seen++
	}
	p.mu.Unlock()
	switch f {
	case refuse:
		hangUp(w)
		return
	case unavailable:
		w.Header().Set("x-ms-error-code", "ServerBusy")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case internal:
		w.Header().Set("x-ms-error-code", "InternalError")
		w.WriteHeader(http.StatusInternalServerError)
		return
	case timedOut:
		w.Header().Set("x-ms-error-code", "OperationTimedOut")
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	body, _ := io.ReadAll(r.Body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target.Scheme+"://"+p.target.Host+r.URL.RequestURI(), strings.NewReader(string(body)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	out.ContentLength = int64(len(body))
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if f == lose {
		_, _ = io.Copy(io.Discard, resp.Body)
		hangUp(w)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as a crashed front end would send
		}
		_ = conn.Close()
	}
}

// proxied opens a backend on Azurite whose three services are reached
// through one fault proxy each; it returns the proxies blob, queue, table.
func proxied(t *testing.T, retry RetryConfig) (*Backend, [3]*faultProxy) {
	t.Helper()
	cs := azuriteConnString(t)
	r, err := Config{ConnectionString: cs}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	var ps [3]*faultProxy
	var eps [3]string
	for i, ep := range []string{r.blobURL, r.queueURL, r.tURL} {
		u, _ := url.Parse(ep)
		ps[i] = newFaultProxy(t, ep)
		eps[i] = ps[i].srv.URL + u.Path
	}
	pcs := "DefaultEndpointsProtocol=http;AccountName=" + r.account + ";AccountKey=" + r.keyText +
		";BlobEndpoint=" + eps[0] + ";QueueEndpoint=" + eps[1] + ";TableEndpoint=" + eps[2] + ";"
	return openBackend(t, Config{ConnectionString: pcs, Retry: retry}), ps
}

// first returns a rule that applies f to the first request matching
// method (and, if not empty, whose path contains pathPart), and passes
// the rest.
func first(method, pathPart string, f fault) func(r *http.Request, n int) fault {
	done := false
	return func(r *http.Request, _ int) fault {
		if !done && r.Method == method && strings.Contains(r.URL.Path, pathPart) {
			done = true
			return f
		}
		return pass
	}
}

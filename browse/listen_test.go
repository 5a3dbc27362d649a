package browse

import (
	"context"
	"net"
	"net/http"
	"testing"
)

// TestServeClosesSilentConnections stops a server that holds a
// connection on which no request ever came, as a browser's speculative
// connections are: Serve closes it after its grace and reports no error.
func TestServeClosesSilentConnections(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	}()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request on another connection proves the server is serving, so
	// the silent connection has been accepted before the shutdown.
	resp, err := http.Get(URL(l))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	// The server closed the silent connection: a read ends.
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent connection is still open")
	}
}

package browse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// ErrBadAddr reports a listening address that is not :PORT or HOST:PORT.
var ErrBadAddr = errors.New("browse: want :PORT or HOST:PORT")

// ListenAddr resolves an -http address: ":PORT" binds the loopback
// address only, "HOST:PORT" binds HOST as given (0.0.0.0 or [::] for every
// interface). PORT 0 picks a free port.
func ListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadAddr, addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || port != strconv.Itoa(n) {
		return "", fmt.Errorf("%w: %q: port %q is not a number from 0 to 65535", ErrBadAddr, addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Listen binds addr after ListenAddr's rule.
func Listen(addr string) (net.Listener, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("browse: listening on %s: %w", a, err)
	}
	return l, nil
}

// URL is the address to open for a listener.
func URL(l net.Listener) string { return "http://" + l.Addr().String() + "/" }

// shutdownGrace is how long Serve lets requests in flight finish once
// its context is done, before it closes the connections left.
const shutdownGrace = 2 * time.Second

// Serve serves h on l until ctx is done, then shuts the server down,
// letting requests in flight finish for up to shutdownGrace and closing
// what is left. On a loopback address it answers only requests addressed
// to a loopback name (localhost, 127.0.0.1, [::1]); elsewhere, any.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	if isLoopback(l.Addr().String()) {
		h = loopbackNamesOnly(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("browse: serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A browser opens connections ahead of its requests and may
		// never send one on them; Shutdown counts such a connection as
		// busy until it is five seconds old. Every request of the page
		// is short, so what is still open now is one of those, or a
		// client gone quiet: close them.
		err = srv.Close()
	}
	if err != nil {
		return fmt.Errorf("browse: shutting down: %w", err)
	}
	return nil
}

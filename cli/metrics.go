package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/reversi-cloud/reversi/metrics"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/storage"
)

const metricsAddrHelp = "serve Prometheus metrics at http://ADDR/metrics, for example :9090 (default: none)"

// checkMetricsAddr checks the form of -metrics-addr; whether the port is
// free is found out when listening.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usagef("-metrics-addr %q: want host:port or :port (%v)", addr, err)
	}
	return nil
}

// startMetrics serves a worker's metrics on addr, if it is set, and
// returns the observer for its worker loops (nil without addr) and a
// function that stops the server, waiting up to five seconds for
// scrapes under way.
func startMetrics(addr string, be *storage.Metered, progress *pipeline.Progress, log *slog.Logger) (pipeline.Observer, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("-metrics-addr %s: %w", addr, err)
	}
	m := metrics.New(metrics.Sources{Storage: be, Progress: progress})
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	// The actual address, so that a port chosen by the system (:0) can be found.
	log.Info("serving metrics", "addr", ln.Addr().String(), "path", "/metrics")
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-served
	}
	return m, stop, nil
}

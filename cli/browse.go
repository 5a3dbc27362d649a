package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/signal"
	"sync"
	"syscall"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/browse"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/storage"
)

// httpFlag is -http: serve the run browser (package browse).
type httpFlag struct{ addr string }

func (h *httpFlag) register(fs *flag.FlagSet, when string) {
	fs.StringVar(&h.addr, "http", "", "serve the run browser (per-ply table and charts, board viewer, JSON endpoints) at this address "+when+"; :PORT listens on 127.0.0.1 only, HOST:PORT on HOST (0.0.0.0: every interface); read-only")
}

func (h *httpFlag) set() bool { return h.addr != "" }

func (h *httpFlag) validate() error {
	if _, err := browse.ListenAddr(h.addr); h.set() && err != nil {
		return usagef("-http %q: want :PORT or HOST:PORT", h.addr)
	}
	return nil
}

// browser is the run browser serving in the background.
type browser struct {
	url    string
	src    *runSource
	srv    *browse.Server
	cancel context.CancelFunc
	ended  chan struct{} // closed when serving ends
	err    error         // why, once ended is closed
}

// startBrowser serves src on hf's address until ctx is done or stop is
// called; cfg gives the rest of the server's configuration.
func startBrowser(ctx context.Context, hf httpFlag, src *runSource, cfg browse.Config) (*browser, error) {
	cfg.Source = src
	srv, err := browse.New(cfg)
	if err != nil {
		return nil, err
	}
	l, err := browse.Listen(hf.addr)
	if err != nil {
		return nil, err
	}
	b := &browser{url: browse.URL(l), src: src, srv: srv, ended: make(chan struct{})}
	ctx, b.cancel = context.WithCancel(ctx)
	go func() {
		b.err = browse.Serve(ctx, l, srv)
		close(b.ended)
	}()
	return b, nil
}

// stop stops serving and says why serving ended early, if it did.
func (b *browser) stop() error {
	b.cancel()
	<-b.ended
	return b.err
}

// serveUntil serves until ctx is done (Ctrl-C), then stops.
func (b *browser) serveUntil(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-b.ended:
	}
	return b.stop()
}

// finish says that this process's worker loops stopped and recorded
// their transactions in the run.
func (b *browser) finish() { b.srv.Finish() }

// runSource is the browser's view of a run: its reports carry the
// transactions and CPU time every process recorded and their cost, as
// inspect's do; this process's too while it runs, as its recorder
// stores them every few seconds (recordStatsEvery). The run is opened on
// first use, as enumerate seeds it only once its worker loops start.
type runSource struct {
	be   *storage.Metered
	name string
	cf   *costFlags

	mu  sync.Mutex
	run *pipeline.Run
}

func (s *runSource) open(ctx context.Context) (*pipeline.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != nil {
		return s.run, nil
	}
	r, err := pipeline.OpenRun(ctx, s.be, s.name)
	if errors.Is(err, pipeline.ErrNoRun) {
		return nil, fmt.Errorf("run %q is not seeded yet", s.name)
	}
	if err != nil {
		return nil, err
	}
	s.run = r
	return r, nil
}

// Report is the run's report with its transactions and cost.
func (s *runSource) Report(ctx context.Context) (*report.Report, error) {
	r, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := r.Report(ctx)
	if err != nil {
		return nil, err
	}
	stats, err := r.RecordedStats(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.cf.apply(ctx, rep, s.be, s.name, stats); err != nil {
		return nil, err
	}
	return rep, nil
}

// Lookup is (*pipeline.Run).Lookup.
func (s *runSource) Lookup(ctx context.Context, p board.Position) (*pipeline.PositionInfo, error) {
	r, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	return r.Lookup(ctx, p)
}

// browseRun serves src to a web browser until SIGINT or SIGTERM.
func browseRun(env Env, hf httpFlag, src *runSource, o message.Origin) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	web, err := startBrowser(ctx, hf, src, browse.Config{Origin: o})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "inspect: serving run %s at %s until Ctrl-C\n", src.name, web.url)
	return web.serveUntil(ctx)
}

// Package browse serves a run to a web browser: the per-ply table with
// charts, a board viewer whose legal moves lead to the children, and the
// live progress of a run worked on in this process. The page is plain
// HTML, JavaScript and SVG embedded in the binary; it reads the JSON
// endpoints below, which scripts can use as well. Every endpoint answers
// GET only (405 otherwise) and nothing it serves holds a storage key or a
// connection string. Serve on a loopback address answers only requests
// addressed to a loopback name.
//
//	GET /api/report
//	    the run's report as report.Report JSON (the fields of enumerate
//	    -json: per-ply counts, transactions and cost; each ply's
//	    transactions and cost_usd, also in cost.plies with plies still
//	    being worked on, and cost.no_ply for the rest).
//	GET /api/position?moves=f5d6c3   (from the run's start position, the
//	                                  board's usual one or -start's; "" is the start)
//	GET /api/position?key=b0000…     (a 33-character key, any orientation)
//	    one position: its board, result and score, best moves, canonical
//	    parents and its children with their results (Position). A
//	    position the run has not reached answers 404 with its board and
//	    an error; unreadable moves or keys answer 400.
//	GET /api/progress
//	    what the worker loops of this process have done and the ply of
//	    the latest task (Progress); live is false when the process only
//	    reads the run, as inspect does.
//
// Errors are JSON too: {"error": "..."}.
package browse

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/pipeline"
	"github.com/reversi-cloud/reversi/report"
)

// Source is what the server reads a run through; *pipeline.Run is one.
type Source interface {
	// Report summarises the run, complete or not.
	Report(ctx context.Context) (*report.Report, error)
	// Lookup finds a position with its result, parents and children, or
	// fails with pipeline.ErrNotInRun.
	Lookup(ctx context.Context, p board.Position) (*pipeline.PositionInfo, error)
}

// Config configures a Server.
type Config struct {
	Source Source
	// Origin is the run's board and start position: the position moves
	// are played from and plies are counted from, for parsing moves and
	// keys. Its Start may be left zero for the board's usual start.
	Origin message.Origin
	// Progress counts the work of the worker loops of this process, from
	// Started on; nil when the process only reads the run.
	Progress *pipeline.Progress
	Started  time.Time
	// Poll is how often the page asks for progress while the run is live
	// (default DefaultPoll); it reloads an incomplete report every
	// ReportPolls polls.
	Poll time.Duration
}

// DefaultPoll is the page's progress polling interval.
const DefaultPoll = time.Second

// ReportPolls is how many progress polls the page makes between reloads
// of an incomplete run's report, which costs a few storage transactions.
const ReportPolls = 5

// Server is the browser's HTTP handler.
type Server struct {
	cfg        Config
	mux        *http.ServeMux
	finishedAt atomic.Int64 // Unix nanoseconds when Finish was called; 0 before
}

//go:embed static
var static embed.FS

// New checks cfg and returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Source == nil || cfg.Origin.Board == nil {
		return nil, errors.New("browse: a source and a board are required")
	}
	if cfg.Origin.Start == (board.Position{}) {
		cfg.Origin.Start = cfg.Origin.Board.Start()
	}
	if err := cfg.Origin.Board.Valid(cfg.Origin.Start); err != nil {
		return nil, fmt.Errorf("browse: start position: %w", err)
	}
	if cfg.Poll == 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Poll < 10*time.Millisecond {
		return nil, fmt.Errorf("browse: poll interval %v: must be at least 10ms", cfg.Poll)
	}
	if cfg.Started.IsZero() {
		cfg.Started = time.Now()
	}
	files, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	s.mux.HandleFunc("/api/report", s.report)
	s.mux.HandleFunc("/api/position", s.position)
	s.mux.HandleFunc("/api/progress", s.progress)
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
	s.mux.Handle("/", http.FileServerFS(files))
	return s, nil
}

// Finish tells the page that the worker loops of this process stopped:
// it stops polling for progress and reloads the report once. Rates are
// over the time until the first call.
func (s *Server) Finish() { s.finish(time.Now()) }

func (s *Server) finish(at time.Time) { s.finishedAt.CompareAndSwap(0, at.UnixNano()) }

// ServeHTTP answers GET requests only.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	if r.Method != http.MethodGet {
		h.Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "read-only: GET only")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackNamesOnly refuses requests addressed to a name that is not a
// loopback one, so that a web page elsewhere cannot read a run served on
// 127.0.0.1 through a name of its own pointed there (DNS rebinding).
func loopbackNamesOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopback(r.Host) {
			writeError(w, http.StatusForbidden, "host "+r.Host+" is not a loopback name")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a host or host:port names this machine.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	rep, err := s.cfg.Source.Report(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "reading the report: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) position(w http.ResponseWriter, r *http.Request) {
	p, err := s.parsePosition(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	info, err := s.cfg.Source.Lookup(r.Context(), p)
	if errors.Is(err, pipeline.ErrNotInRun) {
		b := s.cfg.Origin.Board
		out := NewPosition(b, &pipeline.PositionInfo{Position: p, Canonical: b.Canonical(p), Ply: s.cfg.Origin.Ply(p)})
		out.Error = err.Error()
		writeJSON(w, http.StatusNotFound, out)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "looking up the position: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, NewPosition(s.cfg.Origin.Board, info))
}

// parsePosition reads ?key= or ?moves= (moves from the run's start; an
// absent or empty list is the start position).
func (s *Server) parsePosition(r *http.Request) (board.Position, error) {
	q := r.URL.Query()
	key, hasKey := q["key"]
	moves, hasMoves := q["moves"]
	switch {
	case hasKey && hasMoves:
		return board.Position{}, errors.New("give key or moves, not both")
	case len(key) > 1 || len(moves) > 1:
		return board.Position{}, errors.New("give one key or one move list")
	case hasKey:
		p, err := s.cfg.Origin.Board.ParseText(strings.TrimSpace(key[0]))
		if err != nil {
			return p, fmt.Errorf("key: %w", err)
		}
		return p, nil
	case hasMoves:
		p, err := ParseMoves(s.cfg.Origin, moves[0])
		if err != nil {
			return p, fmt.Errorf("moves: %w", err)
		}
		return p, nil
	}
	return s.cfg.Origin.Start, nil
}

func (s *Server) progress(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.snapshot(time.Now()))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// errorOut is the body of every failed API call.
type errorOut struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorOut{Error: msg})
}

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/storage"
)

// Run is an open handle on one run's resources.
type Run struct {
	Config RunConfig
	Board  *board.Board

	backend storage.Backend
	work    storage.Queue
	poison  storage.Queue
	blobs   storage.Container
	state   storage.Table
	back    storage.Table
}

func newRun(be storage.Backend, cfg RunConfig) (*Run, error) {
	b, err := board.New(cfg.Board)
	if err != nil {
		return nil, err
	}
	return &Run{
		Config: cfg, Board: b, backend: be,
		work:   be.Queue(WorkQueue(cfg.Name)),
		poison: be.Queue(PoisonQueue(cfg.Name)),
		blobs:  be.Container(Container(cfg.Name)),
		state:  be.Table(StateTable(cfg.Name)),
		back:   be.Table(BackTable(cfg.Name)),
	}, nil
}

// ErrNoRun means the named run has not been seeded.
var ErrNoRun = errors.New("run not found")

// OpenRun opens a seeded run by name, reading its recorded configuration.
func OpenRun(ctx context.Context, be storage.Backend, name string) (*Run, error) {
	ctx = withCategory(ctx, CategoryControl)
	if err := ValidRunName(name); err != nil {
		return nil, err
	}
	e, err := be.Table(StateTable(name)).Get(ctx, pkRun, rkConfig)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q has not been seeded (run the seed command first)", ErrNoRun, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %q configuration: %w", name, err)
	}
	cfg := RunConfig{Name: name}
	cfg.Board = int(propInt(e, "Board"))
	cfg.Target = int(propInt(e, "Target"))
	cfg.BlobPositions = int(propInt(e, "BlobPositions"))
	cfg.FanIn = int(propInt(e, "FanIn"))
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("run %q has a bad recorded configuration: %w", name, err)
	}
	return newRun(be, cfg)
}

// Table layout of the state table.
const (
	pkRun    = "run"
	rkConfig = "config"
	rkDone   = "done"
	pkPlies  = "plies"
	pkStats  = "workers"
)

func pkRecords(ply int) string { return fmt.Sprintf("r%02d", ply) }
func pkResolve(ply int) string { return fmt.Sprintf("v%02d", ply) }
func rkPly(ply int) string     { return fmt.Sprintf("%02d", ply) }

// Ply states.
const (
	plyOpen     = "open"     // receiving runs from the previous ply's expansion
	plyComplete = "complete" // final, non-overlapping blobs known
)

// plyRecord is the one row that says where a ply stands. Every change to
// it is guarded by its ETag, so each transition happens exactly once.
type plyRecord struct {
	Ply       int
	ETag      string
	State     string
	Tasks     int              // expansion tasks that feed this ply
	Splitters []board.Position // bucket bounds for this ply's runs
	Blobs     []string         // final blobs, in key order
	Counts    []int64          // positions per final blob
	Positions int64
	Terminal  int64
	Edges     int64
	Merges    int64
	BlobReads int64
	Merged    int64 // entries read by merges

	Owner      string // the claim that completed the ply
	Dispatched bool   // its next messages are enqueued

	Resolved     bool
	ResolveOwner string
	ResDispatch  bool // the previous ply's resolve messages are enqueued
	Black        int64
	White        int64
	Draws        int64
	Unknown      int64
}

func (p *plyRecord) entity() storage.Entity {
	props := map[string]any{
		"State": p.State, "Tasks": int64(p.Tasks),
		"Positions": p.Positions, "Terminal": p.Terminal, "Edges": p.Edges,
		"Merges": p.Merges, "BlobReads": p.BlobReads, "Merged": p.Merged,
		"Owner": p.Owner, "Dispatched": p.Dispatched,
		"Resolved": p.Resolved, "ResolveOwner": p.ResolveOwner, "ResDispatch": p.ResDispatch,
		"Black": p.Black, "White": p.White, "Draws": p.Draws, "Unknown": p.Unknown,
		"Splitters": encodeKeys(p.Splitters),
	}
	counts := make([]byte, 0, 8*len(p.Counts))
	for _, c := range p.Counts {
		counts = binary.BigEndian.AppendUint64(counts, uint64(c))
	}
	splitProps(props, "Blobs", []byte(strings.Join(p.Blobs, "\n")))
	splitProps(props, "Counts", counts)
	return storage.Entity{PartitionKey: pkPlies, RowKey: rkPly(p.Ply), Props: props}
}

func (r *Run) decodePly(e storage.Entity) (*plyRecord, error) {
	p := &plyRecord{ETag: e.ETag}
	fmt.Sscanf(e.RowKey, "%d", &p.Ply)
	p.State = propStr(e, "State")
	p.Tasks = int(propInt(e, "Tasks"))
	p.Positions, p.Terminal, p.Edges = propInt(e, "Positions"), propInt(e, "Terminal"), propInt(e, "Edges")
	p.Merges, p.BlobReads, p.Merged = propInt(e, "Merges"), propInt(e, "BlobReads"), propInt(e, "Merged")
	p.Owner, p.Dispatched = propStr(e, "Owner"), propBool(e, "Dispatched")
	p.Resolved, p.ResolveOwner, p.ResDispatch = propBool(e, "Resolved"), propStr(e, "ResolveOwner"), propBool(e, "ResDispatch")
	p.Black, p.White, p.Draws, p.Unknown = propInt(e, "Black"), propInt(e, "White"), propInt(e, "Draws"), propInt(e, "Unknown")
	var err error
	if p.Splitters, err = r.decodeKeys(propBytes(e, "Splitters")); err != nil {
		return nil, fmt.Errorf("ply %d splitters: %w", p.Ply, err)
	}
	if blobs := joinProps(e, "Blobs"); len(blobs) > 0 {
		p.Blobs = strings.Split(string(blobs), "\n")
	}
	counts := joinProps(e, "Counts")
	for i := 0; i+8 <= len(counts); i += 8 {
		p.Counts = append(p.Counts, int64(binary.BigEndian.Uint64(counts[i:])))
	}
	if len(p.Counts) != len(p.Blobs) {
		return nil, fmt.Errorf("ply %d record: %d blobs but %d counts", p.Ply, len(p.Blobs), len(p.Counts))
	}
	return p, nil
}

// errNoPly marks a ply record that does not exist.
var errNoPly = errors.New("no such ply")

func (r *Run) getPly(ctx context.Context, ply int) (*plyRecord, error) {
	e, err := r.state.Get(ctx, pkPlies, rkPly(ply))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("ply %d has no record in this run: %w: %w", ply, errNoPly, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading ply %d record: %w", ply, err)
	}
	return r.decodePly(e)
}

func (r *Run) updatePly(ctx context.Context, p *plyRecord) error {
	etag, err := r.state.Update(ctx, p.entity(), p.ETag)
	if err != nil {
		return fmt.Errorf("updating ply %d record: %w", p.Ply, err)
	}
	p.ETag = etag
	return nil
}

// splitProps stores a payload that may exceed one property's 64 KiB.
func splitProps(props map[string]any, name string, b []byte) {
	for i := 0; len(b) > 0 || i == 0; i++ {
		n := min(len(b), 60000)
		props[fmt.Sprintf("%s%02d", name, i)] = append([]byte(nil), b[:n]...)
		b = b[n:]
		if len(b) == 0 {
			break
		}
	}
}

func joinProps(e storage.Entity, name string) []byte {
	var out []byte
	for i := 0; ; i++ {
		v, ok := e.Props[fmt.Sprintf("%s%02d", name, i)].([]byte)
		if !ok {
			return out
		}
		out = append(out, v...)
	}
}

func encodeKeys(ps []board.Position) []byte {
	out := make([]byte, 0, len(ps)*board.KeyLen)
	for _, p := range ps {
		out = p.AppendKey(out)
	}
	return out
}

func (r *Run) decodeKeys(b []byte) ([]board.Position, error) {
	if len(b)%board.KeyLen != 0 {
		return nil, fmt.Errorf("key list of %d bytes is not a multiple of %d", len(b), board.KeyLen)
	}
	out := make([]board.Position, 0, len(b)/board.KeyLen)
	for i := 0; i < len(b); i += board.KeyLen {
		p, err := r.Board.DecodeKey(b[i : i+board.KeyLen])
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func propStr(e storage.Entity, k string) string { s, _ := e.Props[k].(string); return s }
func propInt(e storage.Entity, k string) int64  { n, _ := e.Props[k].(int64); return n }
func propBool(e storage.Entity, k string) bool  { b, _ := e.Props[k].(bool); return b }
func propBytes(e storage.Entity, k string) []byte {
	b, _ := e.Props[k].([]byte)
	return b
}

// claimID turns a queue message into a short key-safe name that is the
// same on every redelivery of that message and differs between attempts
// when attempt is set.
func claimID(msgID string, attempt int64) string {
	h := sha256.Sum256([]byte(msgID))
	if attempt == 0 {
		return hex.EncodeToString(h[:8])
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h[:8]), attempt)
}

// queryAll reads a whole row-key range of one partition.
func queryAll(ctx context.Context, t storage.Table, pk, from, to string) ([]storage.Entity, error) {
	return storage.QueryAll(ctx, t, pk, storage.QueryOptions{From: from, To: to})
}

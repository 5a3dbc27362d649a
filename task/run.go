package task

import (
	"context"
	"fmt"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// Run is what every handler of one run shares: its settings, its rows,
// its blobs and its work queue.
type Run struct {
	Name string
	// Origin holds the board and the start position, which number the
	// plies (Ply).
	message.Origin
	Target        int // target ply
	BlobPositions int // positions per final blob, at most
	BucketBlobs   int // final blobs per bucket, about
	// Solve says the target ply's positions are solved exactly.
	Solve bool

	Store *runstore.Store
	Blobs storage.Container
	Work  storage.Queue
}

// Enqueue sends a work message, visible at once and never expiring.
func (r *Run) Enqueue(ctx context.Context, m message.Message) error {
	return r.EnqueueText(ctx, m.Format(), 0)
}

// EnqueueText sends a work message's text after delay.
func (r *Run) EnqueueText(ctx context.Context, text string, delay time.Duration) error {
	if _, err := r.Work.Enqueue(ctx, text, storage.EnqueueOptions{Delay: delay, TTL: -1}); err != nil {
		return fmt.Errorf("enqueuing %s: %w", message.Clip(text), err)
	}
	return nil
}

// ReadKeys reads a blob of sorted position keys (a final blob).
func (r *Run) ReadKeys(ctx context.Context, blob string) ([]board.Position, error) {
	data, err := r.Blobs.Get(ctx, blob)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", blob, err)
	}
	if len(data)%board.KeyLen != 0 {
		return nil, fmt.Errorf("blob %s: %d bytes is not a whole number of %d-byte keys", blob, len(data), board.KeyLen)
	}
	out := make([]board.Position, 0, len(data)/board.KeyLen)
	for i := 0; i < len(data); i += board.KeyLen {
		p, err := r.Board.DecodeKey(data[i : i+board.KeyLen])
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", blob, err)
		}
		out = append(out, p)
	}
	return out, nil
}

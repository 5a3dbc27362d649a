package expand

import (
	"bytes"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/internal/reuse"
)

// buffer is an expansion task's working memory: the positions it
// expands (at 8x8 ply 14, 524,288 of 24 bytes), its edges (some 5.4
// million of 16 bytes, and as many for sorting them) and their packed
// bytes. entries holds the edges instead in the tasks whose edges do
// not fit in 16 bytes (edgeLayout), none at the plies runs reach.
type buffer struct {
	keys           []board.Position
	edges, scratch []edge
	bucketed       bucketed // a large task's edges by first bucket, in edges' memory
	entries        []dedup.Entry
	packed         bytes.Buffer
}

// buffers keeps the buffers of finished tasks for the next ones: one
// for each loop expanding at once, until the ply's expansions are over.
var buffers = reuse.List[buffer]{Idle: 10 * time.Second}

package expand

import (
	"bytes"
	"sync"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
)

// buffer is an expansion task's working memory: the positions it
// expands (at 8x8 ply 14, 524,288 of 24 bytes), its edges (some 5.4
// million of 32 bytes) and their packed bytes.
type buffer struct {
	keys    []board.Position
	entries []dedup.Entry
	packed  bytes.Buffer
}

// buffers keeps the buffers of finished tasks for the next ones. The
// pages of a buffer allocated afresh for every task had to be cleared
// and faulted in each time, which cost more CPU than sorting the edges
// on VMs where page faults are dear, and its garbage made the collector
// run and stop goroutines over and over. A pool holds one buffer for
// each loop expanding at once, and drops them once the ply's expansions
// are over and two collections have passed without a task.
var buffers = sync.Pool{New: func() any { return new(buffer) }}

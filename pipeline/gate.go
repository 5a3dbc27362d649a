package pipeline

import (
	"sync/atomic"
	"time"
)

// gate lets one of the worker loops of a process through at most once a
// period, for the checks that cost O(queue shards) or read one hot row:
// asked after every empty poll by hundreds of loops, they would take
// more calls than the polls themselves, and they need not be fresher
// than the period. Its zero value lets the first caller through.
type gate struct {
	last atomic.Int64 // Unix nanoseconds the gate last opened
}

// open reports whether period has passed since the gate last opened,
// and if so opens it for this caller alone.
func (g *gate) open(period time.Duration) bool {
	last, now := g.last.Load(), time.Now().UnixNano()
	return now-last >= int64(period) && g.last.CompareAndSwap(last, now)
}

package storage

import (
	"context"
	"sync/atomic"
	"time"
)

// Handling is one handling of one message: every storage call made under
// a context from WithHandling, however many times the handler runs.
// The Metered backend that bills those calls counts them in the
// handling as well, and keeps, for the handling's ply, how many
// handlings there were and the most that one of them cost
// (PlyStat.Tasks and the PlyStat.MaxTask fields). It needs no end: a
// handling's counts only grow, so the most it has reached after each
// call is the most it reaches.
type Handling struct {
	ply   int
	kind  string // the message's kind, which PlyStat.MaxByKind splits by
	start time.Time
	// meter is the Metered that counts the handling, the first to bill
	// one of its calls: a backend metered twice counts it once.
	meter        atomic.Pointer[Metered]
	transactions atomic.Int64
	entities     atomic.Int64
}

type handlingKey struct{}

// WithHandling starts a handling of a message of ply, of the kind named:
// the calls made with the context it returns are the handling's, and the
// ply's (WithPly).
func WithHandling(ctx context.Context, ply int, kind string) context.Context {
	return context.WithValue(WithPly(ctx, ply), handlingKey{}, &Handling{ply: ply, kind: kind, start: time.Now()})
}

func handlingFrom(ctx context.Context) *Handling {
	h, _ := ctx.Value(handlingKey{}).(*Handling)
	return h
}

// claim reports whether m counts h, and whether this is m's first call
// of h.
func (h *Handling) claim(m *Metered) (counts, first bool) {
	if h.meter.CompareAndSwap(nil, m) {
		return true, true
	}
	return h.meter.Load() == m, false
}

// storeMax raises v to at least n.
func storeMax(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

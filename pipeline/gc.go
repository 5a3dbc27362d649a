package pipeline

import "runtime/debug"

// GCSettings are the garbage collector's target (GOGC) and soft memory
// limit (GOMEMLIMIT) for a process.
type GCSettings struct {
	Percent     int
	MemoryLimit int64
}

// WorkerGC is for processes that run worker loops: the commands apply it
// where the environment sets neither, and the capacity plan's yardstick
// runs under it (plan.MeasureYardstick).
//
// Percent: the loops' large allocations, an expansion's edges and a
// merge's blocks, hold no pointers, so a collection costs little however
// large they are, while Go's default of 100 lets the heap reach twice
// what is live: at 8x8 ply 14 two loops held about half a gigabyte live
// and grew to 1.5 GB. At 25 the heap stays within a quarter above what
// is live.
//
// MemoryLimit: when each expansion allocated its edges afresh, the
// runtime handed the freed memory back to the system slowly, so at 8x8
// ply 14 the resident size reached 1.0 GB while about half of it was
// live. Expansions now reuse their buffers (internal/reuse) and drop
// them after their stage, and merges' readers take theirs from a pool
// (packed/scratch.go); near the limit the collector runs sooner and
// returns freed memory at once. It is soft: a task that needs more gets
// it, at the cost of more frequent collections.
var WorkerGC = GCSettings{Percent: 25, MemoryLimit: 768 << 20}

// Apply sets the process's collector to g and returns the settings it
// had, so that a caller can put them back.
func (g GCSettings) Apply() GCSettings {
	return GCSettings{
		Percent:     debug.SetGCPercent(g.Percent),
		MemoryLimit: debug.SetMemoryLimit(g.MemoryLimit),
	}
}

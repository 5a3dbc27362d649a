package task

import (
	"fmt"
	"sync/atomic"

	"github.com/reversi-cloud/reversi/message"
)

// Progress counts work done by the worker loops of one process.
type Progress struct {
	Tasks     atomic.Int64
	Positions atomic.Int64
	Edges     atomic.Int64
	Merges    atomic.Int64
	Poisoned  atomic.Int64
	current   atomic.Value // string: what the latest task was doing
	ply       atomic.Int64 // 1 + the latest task's ply; 0 before the first
}

// Current says what the latest task was doing, such as "expanding ply 7".
func (p *Progress) Current() string {
	s, _ := p.current.Load().(string)
	return s
}

var verbs = map[message.Kind]string{
	message.KindInline: "expanding", message.KindChunk: "expanding",
	message.KindScan: "merging", message.KindCombine: "merging", message.KindMerge: "merging",
	message.KindResolve: "resolving", message.KindCompensation: "cleaning",
}

// Ply is the ply of the latest task; ok is false before the first.
func (p *Progress) Ply() (ply int, ok bool) {
	n := p.ply.Load()
	return int(n - 1), n != 0
}

// Started records the message a task has started on.
func (p *Progress) Started(m message.Message) {
	p.ply.Store(int64(m.Ply) + 1)
	p.current.Store(fmt.Sprintf("%s ply %d", verbs[m.Kind], m.Ply))
}

// Add counts positions expanded and edges found.
func (p *Progress) Add(positions, edges int64) {
	p.Positions.Add(positions)
	p.Edges.Add(edges)
}

package task

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

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
	step      atomic.Value // *Step: the latest status reading
	first     atomic.Value // *Step: the first reading of the current step, which its rate is measured from
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
	message.KindDispatch: "dispatching", message.KindBack: "resolving",
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

// Step is where a run stands, as a status poll last read it: the ply
// being worked on, the step under way ("expanding", "combining",
// "merging", "resolving"; on a ply of several combine levels,
// "combining (level 1 of 2)" and so on), and how many of the step's items (tasks,
// combine tasks, buckets, final blobs) are done out of its total.
type Step struct {
	Ply         int
	Name        string
	Done, Total int
	At          time.Time // when it was read
}

// SetStep records a status reading. Within a step the count done never
// goes back: a stage's progress is an estimate where its items are done
// out of order (runstore.Stage.Progress), and a line that counts back
// reads as work lost.
func (p *Progress) SetStep(s Step) {
	first, _ := p.first.Load().(*Step)
	if first == nil || first.Ply != s.Ply || first.Name != s.Name {
		p.first.Store(&s)
	} else if prev, _ := p.step.Load().(*Step); s.Done < prev.Done {
		s.Done = prev.Done
	}
	p.step.Store(&s)
}

// Step returns the latest status reading; ok is false before the first.
func (p *Progress) Step() (s Step, ok bool) {
	sp, _ := p.step.Load().(*Step)
	if sp == nil {
		return Step{}, false
	}
	return *sp, true
}

// ETA estimates the time left in the current step from the rate at which
// its items were done since this process first saw it; ok is false
// until at least one item was done in that time.
func (p *Progress) ETA() (left time.Duration, ok bool) {
	s, have := p.Step()
	first, _ := p.first.Load().(*Step)
	if !have || first == nil || s.Done <= first.Done || !s.At.After(first.At) {
		return 0, false
	}
	return s.At.Sub(first.At) * time.Duration(s.Total-s.Done) / time.Duration(s.Done-first.Done), true
}

// String describes the step in a few words, for example "ply 14:
// 31/79 bucket merges".
func (s Step) String() string {
	step, more, _ := strings.Cut(s.Name, " ") // "combining (level 1 of 2)"
	items := map[string]string{"expanding": "expansion tasks", "combining": "combine tasks", "merging": "bucket merges", "resolving": "final blobs resolved"}[step]
	if more != "" {
		items += " " + more
	}
	return fmt.Sprintf("ply %d: %d/%d %s", s.Ply, s.Done, s.Total, items)
}

package backtrack

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
	"github.com/reversi-cloud/reversi/task"
)

// frontier solves the positions of one final blob of the target ply in
// the solve modes root and wld, each only as far as the start still
// needs it: alpha-beta over the enumerated plies, run by the resolve
// tasks of the target ply together.
//
// Before each position the task takes what the other final blobs of the
// ply have reported so far (the notices to the ply above, which tasks
// write as they go, and read, at most once a newsInterval), computes
// every position's bounds from the target ply up to the start, and then
// the window each
// position must be settled in from the start down: the start's is every
// score (root) or (-1, 1) (wld); a position whose bounds already settle
// its window passes nothing on; otherwise a child's window is the
// parent's, narrowed by the best bound the side to move already has. A
// position of the blob gets the union of its parents' windows: none
// means it is skipped, a narrow one means a cheap bounded search. Of the
// positions left, the task solves next the one a sequential alpha-beta
// would reach first, trying each position's children best first by a
// shallow search (see order): one subtree is settled before the next is
// started, so that its bounds narrow the windows of the next or settle
// its parent without it.
//
// Crash points: every notice row the task writes is its own (keyed by
// its blob) and holds only true bounds, rewritten whole and growing as
// the task goes, so a retry overwrites them. A retry may find
// another blob's rows written by an attempt that died and whose retry
// will solve less than they say, so a redelivered task trusts no other
// blob's notices: it bounds its positions from its own results alone and
// skips only what those settle, and so supplies whatever its parents
// need even if every other blob did the same.
type frontier struct {
	run        *task.Run
	store      *runstore.Store
	mode       runstore.SolveMode
	ply, index int
	squares    int
	trust      bool // other blobs' notices count (a first delivery)

	keys []board.Position
	refs [][]Ref // each position's parents, in the ply above
	done []bool  // solved, bounded or skipped

	// tree holds the plies top to ply-1 (top is 0 unless they would
	// exceed maxTree positions); base[k][b] is the first node of final
	// blob b of ply top+k.
	top  int
	tree [][]treeNode
	base [][]int32
	// ownTo is, per parent final blob, this blob's notices to it so far;
	// unsent names those with notices not yet written, sentAt when they
	// last were.
	ownTo  map[uint32][]Notice
	unsent map[uint32]bool
	sentAt time.Time
	// others holds the other blobs' notices by parent final blob, as read
	// at readAt.
	others map[uint32][]Notice
	readAt time.Time
	now    func() time.Time
	counts [frontierStates]int // positions by state
}

// newsInterval is how often a frontier task reads the other blobs'
// notices and writes its own: positions can take milliseconds, and a
// storage call for each would cost more than the news is worth.
const newsInterval = time.Second

// treeNode is a position of the plies above the target ply.
type treeNode struct {
	pos      board.Position
	order    int // its place in a depth-first walk, children best first
	side     board.Color
	terminal bool
	score    Score   // the final count, when terminal
	kids     []int32 // children in the next ply of the tree
	children int     // distinct children (in the last ply: in the target ply)
	tally    Tally   // in the last ply: its children's notices so far
	// lo and hi bound its differential, black minus white; alpha and
	// beta are the window it must be settled in, empty when alpha >= beta.
	lo, hi, alpha, beta int
}

// maxTree bounds the positions above the target ply that a frontier
// follows up to the start. Beyond, it follows fewer plies and takes each
// position of the highest as needing its exact score (root) or result
// (wld): sound, only less pruned.
const maxTree = 1 << 17

// estimateDepth is the depth, in plies, of the estimates that order the
// positions: a few milliseconds a position.
const estimateDepth = 6

// maxOrdered bounds the positions above the target ply whose estimates
// order the walk; beyond, children keep their blob order.
const maxOrdered = 1 << 12

// frontierState is what a pruned solve did with a position.
type frontierState int

const (
	frontierSolved frontierState = iota
	frontierBounded
	frontierSkipped
	frontierOver // the game is over: nothing to solve
	frontierStates
)

// newFrontier reads final blob index of ply (stored in blob, positions
// keys), its parents and the plies above.
func newFrontier(ctx context.Context, t *task.Task, ply, index int, blob string, keys []board.Position) (*frontier, error) {
	run := t.Run
	f := &frontier{run: run, store: run.Store, mode: run.SolveMode, ply: ply, index: index,
		squares: run.Board.Size() * run.Board.Size(), trust: t.Msg.DequeueCount <= 1,
		keys: keys, refs: make([][]Ref, len(keys)), done: make([]bool, len(keys)),
		ownTo: map[uint32][]Notice{}, unsent: map[uint32]bool{}, now: t.Now}
	if f.now == nil {
		f.now = time.Now
	}
	if ply == 0 {
		return f, nil
	}
	payload, err := f.store.Sources(ctx, blob)
	if err != nil {
		return nil, err
	}
	sr := packed.NewSourceReader(bytes.NewReader(payload))
	for i := range keys {
		refs, ok := sr.Next(nil)
		if !ok {
			if sr.Err() != nil {
				return nil, fmt.Errorf("backtracking rows of %s: %w", blob, sr.Err())
			}
			return nil, fmt.Errorf("backtracking rows of %s cover %d of %d positions", blob, i, len(keys))
		}
		f.refs[i] = slices.Clone(refs)
	}
	return f, f.readTree(ctx)
}

// readTree reads the plies above the target ply, as many as maxTree
// allows; the one above always, but when it alone exceeds maxTree only
// its final blobs that hold parents of this blob's positions (the others
// read as empty).
func (f *frontier) readTree(ctx context.Context) error {
	var finals [][]runstore.FinalBlob
	total := int64(0)
	f.top = f.ply
	for k := f.ply - 1; k >= 0; k-- {
		fs, err := f.store.Finals(ctx, k)
		if err != nil {
			return err
		}
		n := int64(0)
		for _, fb := range fs {
			n += fb.Count
		}
		if k < f.ply-1 && total+n > maxTree {
			break
		}
		total += n
		finals = append([][]runstore.FinalBlob{fs}, finals...)
		f.top = k
	}
	var parents map[uint32]bool // the blobs of the ply above to read; nil: all
	if total > maxTree {
		parents = map[uint32]bool{}
		for _, refs := range f.refs {
			for _, r := range refs {
				parents[r.Blob] = true
			}
		}
	}
	f.tree = make([][]treeNode, len(finals))
	f.base = make([][]int32, len(finals))
	var kids []board.Position
	for k, fs := range finals {
		ply := f.top + k
		for _, fb := range fs {
			f.base[k] = append(f.base[k], int32(len(f.tree[k])))
			if ply == f.ply-1 && parents != nil && !parents[uint32(fb.Index)] {
				continue
			}
			keys, err := f.run.ReadKeys(ctx, fb.Blob)
			if err != nil {
				return err
			}
			for _, p := range keys {
				n := treeNode{pos: p, side: p.Side, terminal: f.run.Board.Terminal(p)}
				switch {
				case n.terminal:
					n.score = TerminalScore(f.run.Board, p)
				case ply == f.ply-1:
					kids, _ = f.run.Board.Children(p, kids[:0])
					n.children = len(kids)
				}
				f.tree[k] = append(f.tree[k], n)
			}
			if k == 0 {
				continue
			}
			payload, err := f.store.Sources(ctx, fb.Blob)
			if err != nil {
				return err
			}
			sr := packed.NewSourceReader(bytes.NewReader(payload))
			var refs []Ref
			for i := range keys {
				var ok bool
				if refs, ok = sr.Next(refs); !ok {
					return fmt.Errorf("backtracking rows of %s cover %d of %d positions: %w", fb.Blob, i, len(keys), sr.Err())
				}
				child := f.base[k][fb.Index] + int32(i)
				for _, r := range refs {
					parent, err := f.node(k-1, r)
					if err != nil {
						return err
					}
					parent.kids = append(parent.kids, child)
					parent.children++
				}
			}
		}
	}
	return nil
}

// blobLen is how many positions of final blob b of ply top+k the tree
// holds.
func (f *frontier) blobLen(k, b int) int {
	end := len(f.tree[k])
	if b+1 < len(f.base[k]) {
		end = int(f.base[k][b+1])
	}
	return end - int(f.base[k][b])
}

// node is the tree's node for r in ply top+k.
func (f *frontier) node(k int, r Ref) (*treeNode, error) {
	if int(r.Blob) >= len(f.base[k]) {
		return nil, fmt.Errorf("backtracking rows name final blob %d of ply %d, which has %d", r.Blob, f.top+k, len(f.base[k]))
	}
	if int(r.Index) >= f.blobLen(k, int(r.Blob)) {
		return nil, fmt.Errorf("backtracking rows name position %d of final blob %d of ply %d, past its end", r.Index, r.Blob, f.top+k)
	}
	return &f.tree[k][int(f.base[k][r.Blob])+int(r.Index)], nil
}

// rootWindow is the window the mode must settle the start in: every
// score for root, who wins for wld.
func (f *frontier) rootWindow() (alpha, beta int) {
	if f.mode == runstore.SolveWLD {
		return -1, 1
	}
	return -f.squares - 1, f.squares + 1
}

// windows computes, from the notices so far, the window each position
// of the blob that is not done must be solved in, for black (empty when
// nothing needs it).
func (f *frontier) windows(ctx context.Context) ([][2]int, error) {
	out := make([][2]int, len(f.keys))
	if f.ply == 0 {
		a, b := f.rootWindow()
		for i := range out {
			out[i] = [2]int{a, b}
		}
		return out, nil
	}
	if err := f.readNews(ctx); err != nil {
		return nil, err
	}
	// Bounds, from the ply above the target up.
	last := len(f.tree) - 1
	for k := last; k >= 0; k-- {
		for i := range f.tree[k] {
			n := &f.tree[k][i]
			switch {
			case n.terminal:
				n.lo, n.hi = n.score.Interval(f.squares)
			case k == last:
				n.lo, n.hi = n.tally.Bounds(n.side, n.children, f.squares)
			default:
				// The mover's view: the best of the children's bounds.
				n.lo, n.hi = -f.squares, -f.squares
				for _, c := range n.kids {
					lo, hi := f.tree[k+1][c].lo, f.tree[k+1][c].hi
					if n.side == board.White {
						lo, hi = -hi, -lo
					}
					n.lo, n.hi = max(n.lo, lo), max(n.hi, hi)
				}
				if n.side == board.White {
					n.lo, n.hi = -n.hi, -n.lo
				}
			}
		}
	}
	// Windows, from the top down: a child's is the union of what its
	// parents need of it.
	for k := range f.tree {
		for i := range f.tree[k] {
			n := &f.tree[k][i]
			n.alpha, n.beta = f.squares+1, -f.squares-1
			if k == 0 {
				n.alpha, n.beta = f.rootWindow()
			}
		}
	}
	for k := range last {
		for i := range f.tree[k] {
			n := &f.tree[k][i]
			a, b, ok := n.childWindow()
			if !ok {
				continue
			}
			for _, c := range n.kids {
				kid := &f.tree[k+1][c]
				kid.alpha, kid.beta = min(kid.alpha, a), max(kid.beta, b)
			}
		}
	}
	for i := range out {
		a, b := f.squares+1, -f.squares-1
		for _, r := range f.refs[i] {
			n, err := f.node(last, r)
			if err != nil {
				return nil, err
			}
			if ca, cb, ok := n.childWindow(); ok {
				a, b = min(a, ca), max(b, cb)
			}
		}
		out[i] = [2]int{a, b}
	}
	return out, nil
}

// childWindow is the window n's children must be settled in, black
// minus white: none once n's bounds settle its own window.
func (n *treeNode) childWindow() (alpha, beta int, ok bool) {
	switch {
	case n.alpha >= n.beta, n.lo == n.hi, n.lo >= n.beta, n.hi <= n.alpha:
		return 0, 0, false
	case n.side == board.Black:
		return max(n.alpha, n.lo), n.beta, true
	}
	return n.alpha, min(n.beta, n.hi), true
}

// readNews sets the tallies of the ply above from the other final
// blobs' notices (read again once newsInterval has passed; first
// deliveries only, see frontier) and this blob's own results. A payload
// that does not decode (half written) is no news.
func (f *frontier) readNews(ctx context.Context) error {
	last := len(f.tree) - 1
	if f.trust && (f.others == nil || f.now().Sub(f.readAt) >= newsInterval) {
		f.others = map[uint32][]Notice{}
		for pb := range f.base[last] {
			if f.blobLen(last, pb) == 0 {
				continue // not read: no parent of this blob's positions
			}
			payloads, err := f.store.NoticesFrom(ctx, f.ply-1, pb)
			if err != nil {
				return err
			}
			for child, payload := range payloads {
				if child == f.index {
					continue // this attempt's own results count instead
				}
				var ns []Notice
				if DecodeNotices(payload, f.squares, func(n Notice) { ns = append(ns, n) }) == nil {
					f.others[uint32(pb)] = append(f.others[uint32(pb)], ns...)
				}
			}
		}
		f.readAt = f.now()
	}
	for i := range f.tree[last] {
		f.tree[last][i].tally = Tally{}
	}
	for pb := range f.base[last] {
		for _, ns := range [2][]Notice{f.others[uint32(pb)], f.ownTo[uint32(pb)]} {
			for _, n := range ns {
				node, err := f.node(last, Ref{Blob: uint32(pb), Index: n.Index})
				if err != nil {
					return err
				}
				node.tally.Add(node.side, n)
			}
		}
	}
	return nil
}

// solveAll solves the blob's positions as far as they are needed, in the
// order of narrowest window first, and returns their results and scores.
// Terminal positions are scored before any is solved.
func (f *frontier) solveAll(ctx context.Context, s *solve.Solver) ([]board.Result, []Score, error) {
	results := make([]board.Result, len(f.keys))
	scores := make([]Score, len(f.keys))
	for i, p := range f.keys {
		if f.run.Board.Terminal(p) {
			results[i], scores[i] = f.run.Board.Result(p), TerminalScore(f.run.Board, p)
			if err := f.record(ctx, i, results[i], scores[i], frontierOver); err != nil {
				return nil, nil, err
			}
		}
	}
	order, err := f.order(s)
	if err != nil {
		return nil, nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		ws, err := f.windows(ctx)
		if err != nil {
			return nil, nil, err
		}
		next := -1
		for i, w := range ws {
			switch {
			case f.done[i]:
			case w[0] >= w[1]:
				// Windows only narrow as bounds arrive: nothing will
				// need it.
				if err := f.record(ctx, i, board.Unknown, Score{}, frontierSkipped); err != nil {
					return nil, nil, err
				}
			case next < 0 || order[i] < order[next]:
				next = i
			}
		}
		if next < 0 {
			return results, scores, nil
		}
		res, score, err := f.solve(ctx, s, next, ws[next][0], ws[next][1])
		if err != nil {
			return nil, nil, fmt.Errorf("solving position %d: %w", next, err)
		}
		results[next], scores[next] = res, score
	}
}

// solve solves position i in the window (alpha, beta), black minus
// white, and reports it to its parents.
func (f *frontier) solve(ctx context.Context, s *solve.Solver, i, alpha, beta int) (board.Result, Score, error) {
	p := f.keys[i]
	if p.Side == board.White {
		alpha, beta = -beta, -alpha
	}
	r, err := s.SolveWindow(ctx, f.run.Board, p, alpha, beta)
	if err != nil {
		return board.Unknown, Score{}, err
	}
	lo, hi := r.Lower, r.Upper
	if p.Side == board.White {
		lo, hi = -hi, -lo
	}
	score := IntervalScore(lo, hi, f.squares)
	state := frontierBounded
	if score.Exact {
		state = frontierSolved
	}
	return score.Result(), score, f.record(ctx, i, score.Result(), score, state)
}

// record marks position i done and, when it has news, sends it to its
// parents: the blob's notices to each parent blob so far, rewritten
// whole, so that the other tasks of the ply can use them before this one
// ends; at most once every newsInterval (the resolve task writes them
// all when the blob is done).
func (f *frontier) record(ctx context.Context, i int, res board.Result, s Score, state frontierState) error {
	f.done[i] = true
	f.counts[state]++
	if s == (Score{}) && res == board.Unknown {
		return nil
	}
	for _, r := range f.refs[i] {
		f.ownTo[r.Blob] = append(f.ownTo[r.Blob], Notice{Index: r.Index, Result: res, Score: s})
		f.unsent[r.Blob] = true
	}
	if f.now().Sub(f.sentAt) < newsInterval {
		return nil
	}
	for pb := range f.unsent {
		ns := slices.Clone(f.ownTo[pb])
		slices.SortStableFunc(ns, func(a, b Notice) int { return int(a.Index) - int(b.Index) })
		if err := f.store.PutNotices(ctx, f.ply, f.index, int(pb), AppendNotices(nil, ns)); err != nil {
			return err
		}
	}
	clear(f.unsent)
	f.sentAt = f.now()
	return nil
}

// order ranks the blob's positions for solving: the place of a
// depth-first walk of the plies above in which every position's children
// come best first for its side to move by an estimate, then among the
// children of one parent, the best first. Terminal positions, and the
// children of a start with no plies above, rank by their estimates alone.
func (f *frontier) order(s *solve.Solver) ([]int, error) {
	estimate := func(p board.Position) (int, error) {
		v, err := s.Estimate(f.run.Board, p, estimateDepth)
		if p.Side == board.White {
			v = -v // black minus white
		}
		return v, err
	}
	// The mover's view of an estimate: larger is better.
	forMover := func(side board.Color, v int) int {
		if side == board.White {
			return -v
		}
		return v
	}
	total := 0
	for _, ply := range f.tree {
		total += len(ply)
	}
	if total <= maxOrdered {
		est := make([][]int, len(f.tree))
		for k := range f.tree {
			est[k] = make([]int, len(f.tree[k]))
			for i := range f.tree[k] {
				v, err := estimate(f.tree[k][i].pos)
				if err != nil {
					return nil, err
				}
				est[k][i] = v
			}
		}
		for k := 0; k+1 < len(f.tree); k++ {
			for i := range f.tree[k] {
				n := &f.tree[k][i]
				slices.SortStableFunc(n.kids, func(a, b int32) int {
					return forMover(n.side, est[k+1][b]) - forMover(n.side, est[k+1][a])
				})
			}
		}
	}
	// The walk: a position reached again by another path keeps its first
	// place.
	seen := make([][]bool, len(f.tree))
	for k := range f.tree {
		seen[k] = make([]bool, len(f.tree[k]))
	}
	next := 0
	var walk func(k int, i int32)
	walk = func(k int, i int32) {
		if seen[k][i] {
			return
		}
		seen[k][i] = true
		f.tree[k][i].order = next
		next++
		if k+1 < len(f.tree) {
			for _, c := range f.tree[k][i].kids {
				walk(k+1, c)
			}
		}
	}
	if len(f.tree) > 0 {
		for i := range f.tree[0] {
			walk(0, int32(i))
		}
	}
	// A position's rank: its first parent's place, then its estimate for
	// that parent's side to move, best first.
	type rank struct{ place, promise, i int }
	ranks := make([]rank, 0, len(f.keys))
	for i, p := range f.keys {
		r := rank{i: i, place: -1}
		v := 0
		if !f.done[i] {
			var err error
			if v, err = estimate(p); err != nil {
				return nil, err
			}
			r.promise = v
		}
		for _, ref := range f.refs[i] {
			n, err := f.node(len(f.tree)-1, ref)
			if err != nil {
				return nil, err
			}
			if r.place < 0 || n.order < r.place {
				r.place, r.promise = n.order, forMover(n.side, v)
			}
		}
		ranks = append(ranks, r)
	}
	slices.SortStableFunc(ranks, func(a, b rank) int {
		if a.place != b.place {
			return a.place - b.place
		}
		return b.promise - a.promise
	})
	out := make([]int, len(f.keys))
	for pos, r := range ranks {
		out[r.i] = pos
	}
	return out, nil
}

// Package expand handles A and C messages: it expands one final blob of a
// ply (or the whole ply, inline) into one sorted run of edges of the next
// ply, cut into the next ply's buckets, and records it with a marker row
// for the buckets' merges.
package expand

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// Handler expands A and C messages: each is one item of the next ply's
// expansion stage (runstore.ExpansionStage), done by task.Do.
//
// Crash points and redelivery:
//   - before anything is written: the redelivery starts over;
//   - after the compensation message: it surfaces later and deletes the
//     blob unless a record refers to it;
//   - after the blob: the blob's name carries this attempt's tag, so a
//     retry writes its own and the compensation message deletes ours, even
//     while the retry runs;
//   - after the marker (runstore.Expansion, which names the blob and
//     its bucket cuts): the redelivery sees it, skips the work and only
//     repeats the idempotent follow-up. Of two attempts that race, the
//     first marker wins and the other's blob is left to its compensation
//     message.
var Handler task.Handler = task.HandlerFunc(handle)

func handle(ctx context.Context, t *task.Task, m message.Message) error {
	run, store := t.Run, t.Run.Store
	if m.Ply >= run.Target {
		return message.Badf("ply %d is the target ply and is not expanded", m.Ply)
	}
	// Both records serve their fixed parts (runstore.Store.PlySince):
	// this ply's totals, fixed once it is Final, and the next ply's
	// sizes, fixed with its record, which comes with this ply's Final.
	ply, err := store.PlySince(ctx, m.Ply, runstore.Final)
	if err != nil {
		return err
	}
	if !ply.State.AtLeast(runstore.Final) {
		return message.Badf("ply %d is %s, not final, so it cannot be expanded", m.Ply, ply.State)
	}
	positions := m.Positions
	switch m.Kind {
	case message.KindChunk:
		f, err := store.Final(ctx, m.Ply, m.Index)
		if errors.Is(err, storage.ErrNotFound) || err == nil && f.Blob != m.Blob {
			return message.Badf("ply %d has no final blob %d named %s", m.Ply, m.Index, m.Blob)
		}
		if err != nil {
			return err
		}
	case message.KindInline:
		if ply.Finals != 1 || int64(len(m.Positions)) != ply.Positions {
			return message.Badf("inline ply %d holds %d positions, but the ply has %d", m.Ply, len(m.Positions), ply.Positions)
		}
	}
	next, err := store.PlySince(ctx, m.Ply+1, runstore.Expanding)
	if err != nil {
		return err
	}
	return task.Do(ctx, task.Item[runstore.Expansion]{
		Stage: store.ExpansionStage(next),
		Index: m.Index,
		Work: func(ctx context.Context) (runstore.Expansion, task.Cover, error) {
			return expand(ctx, t, m, next, positions)
		},
		FollowUp: func(ctx context.Context) error { return t.Flow.Expanded(ctx, t, next.Ply, m.Index) },
	})
}

// expand expands the positions of m (read from its final blob for a
// chunk) into the edges of task m.Index of ply next, writes them as one
// blob cut at next's splitters, and returns the marker that records it
// and the compensation message that covers the blob (a task without
// edges writes none).
func expand(ctx context.Context, t *task.Task, m message.Message, next *runstore.Ply, positions []board.Position) (runstore.Expansion, task.Cover, error) {
	run, child, index := t.Run, next.Ply, m.Index
	splitters, err := dedup.ReadSplitters(ctx, run, child)
	if err != nil {
		return runstore.Expansion{}, nil, err
	}
	if len(splitters)+1 != next.Buckets {
		return runstore.Expansion{}, nil, fmt.Errorf("ply %d has %d buckets but %d splitters: its records are inconsistent", child, next.Buckets, len(splitters))
	}
	buf := buffers.Get()
	defer buffers.Put(buf)
	if m.Kind == message.KindChunk {
		if buf.keys, err = run.ReadKeysTo(ctx, m.Blob, buf.keys[:0]); err != nil {
			return runstore.Expansion{}, nil, err
		}
		positions = buf.keys
	}
	data, cuts, st, err := buf.run(run.Board, positions, uint32(index), next, splitters)
	if err != nil {
		return runstore.Expansion{}, nil, fmt.Errorf("packing the edges of task %d of ply %d: %w", index, child, err)
	}
	t.Progress.Add(int64(len(positions)), st.Edges)

	name := runstore.ExpansionBlobName(child, index, t.Attempt())
	done := runstore.Expansion{Task: index, Parents: int64(len(positions)), Terminal: st.Terminal, Edges: st.Edges, Entries: st.Entries}
	comps := &compensation.Set{}
	if st.Entries > 0 {
		done.Blob, done.Cuts = name, cuts
		if err := comps.Cover(ctx, t, child, name); err != nil {
			return runstore.Expansion{}, nil, err
		}
		if err := run.Blobs.Upload(ctx, name, bytes.NewReader(data)); err != nil {
			return runstore.Expansion{}, nil, fmt.Errorf("writing expansion blob %s: %w", name, err)
		}
	}
	return done, comps, nil
}

// run expands the positions of final blob blob into buf's edges of
// child ply next, sorts them and packs them cut at the splitters (pack).
// The bytes are buf's, good until its next run. The edges are sorted as
// 16-byte edges where they fit (edgeLayout), else as entries. Each names
// its parent as next's record says (runstore.Ply.RunRef): with
// TerminalSources, only the edges to terminal children do (layout).
func (buf *buffer) run(b *board.Board, positions []board.Position, blob uint32, next *runstore.Ply, splitters []board.Position) (data []byte, cuts []int64, st Stats, err error) {
	if l, ok := edgeLayout(positions, next); ok {
		return buf.runEdges(l, b, positions, blob, splitters)
	}
	return buf.runEntries(b, positions, blob, next, splitters)
}

// runEdges is run with 16-byte edges of layout l.
func (buf *buffer) runEdges(l layout, b *board.Board, positions []board.Position, blob uint32, splitters []board.Position) ([]byte, []int64, Stats, error) {
	var st Stats
	var es []edge
	moves := movesAbout(b, positions)
	if moves >= wideEdges {
		// Generated into the sort's first buckets (firstpass.go), in the
		// buffer's memory. A smaller task's sort would not begin with a
		// wide pass, and the plan's sample would be much of its work.
		k := &buf.bucketed
		st = l.generateBuckets(b, positions, moves, k, buf.edges[:cap(buf.edges)])
		if len(buf.scratch) < k.len() {
			buf.scratch = make([]edge, len(k.es))
		}
		es = k.sort(buf.scratch)
		buf.edges, k.es = k.es[:0], nil
	} else {
		var g generated
		buf.edges, st, g = l.generate(b, positions, reserve(buf.edges[:0], moves))
		if cap(buf.scratch) < len(buf.edges) {
			buf.scratch = make([]edge, cap(buf.edges))
		}
		sortEdges(buf.edges, buf.scratch, &g.occ)
		splitSides(buf.edges, buf.scratch, g.whites)
		es = buf.edges
	}
	data, cuts, n, err := pack(&buf.packed, edgeRun{l, es, blob}, splitters)
	st.Entries = n
	return data, cuts, st, err
}

// runEntries is run with 32-byte entries.
func (buf *buffer) runEntries(b *board.Board, positions []board.Position, blob uint32, next *runstore.Ply, splitters []board.Position) ([]byte, []int64, Stats, error) {
	var st Stats
	buf.entries, st = Positions(b, positions, blob, next, buf.entries[:0])
	dedup.SortEntries(buf.entries)
	data, cuts, n, err := pack(&buf.packed, entryRun(buf.entries), splitters)
	st.Entries = n
	return data, cuts, st, err
}

// A sortedRun is what pack writes: a task's edges, sorted.
type sortedRun interface {
	len() int
	pos(i int) board.Position // the child of edge i
	// add writes edges lo to hi (not included) to w, each once: an
	// edge equal to the one before it is dropped. It returns how many
	// it wrote.
	add(w *packed.EdgeWriter, lo, hi int) (int, error)
}

// pack writes the edges of r as packed edge blocks, one segment per
// bucket, into buf (emptied first), and returns its bytes, where each
// bucket starts (the cuts; the last is the end) and how many edges it
// wrote.
func pack(buf *bytes.Buffer, r sortedRun, splitters []board.Position) ([]byte, []int64, int64, error) {
	n := r.len()
	buf.Reset()
	buf.Grow(n * packedEdgeBytes)
	w, err := packed.NewEdgeWriter(buf, packed.Options{})
	if err != nil {
		return nil, nil, 0, err
	}
	var written int64
	cuts := make([]int64, 1, len(splitters)+2)
	i := 0
	for b := 0; b <= len(splitters); b++ {
		end := n
		if b < len(splitters) {
			s := splitters[b]
			end = i + sort.Search(n-i, func(j int) bool { return board.Compare(r.pos(i+j), s) >= 0 })
		}
		k, err := r.add(w, i, end)
		if err != nil {
			return nil, nil, 0, err
		}
		written += int64(k)
		i = end
		end64, err := w.EndSegment()
		if err != nil {
			return nil, nil, 0, err
		}
		cuts = append(cuts, end64)
	}
	if err := w.Close(); err != nil {
		return nil, nil, 0, err
	}
	return buf.Bytes(), cuts, written, nil
}

// entryRun is a sortedRun of 32-byte entries.
type entryRun []dedup.Entry

func (r entryRun) len() int                 { return len(r) }
func (r entryRun) pos(i int) board.Position { return r[i].Pos }
func (r entryRun) add(w *packed.EdgeWriter, lo, hi int) (int, error) {
	n := 0
	for i, e := range r[lo:hi] {
		if i > 0 && e == r[lo+i-1] {
			continue // a child of several parents that names none of them
		}
		if err := w.Add(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// packedEdgeBytes is about what a packed edge takes, with room to spare
// (about 4 bytes on 8x8; see packed's TestSizes), so that pack's buffer
// rarely grows.
const packedEdgeBytes = 5

// Stats counts what an expansion found.
type Stats struct {
	Terminal int64 // positions where the game is over
	Edges    int64 // moves
	// Entries are the run's entries: the distinct children of each
	// position, or with TerminalSources the task's distinct children, each
	// terminal one once for each of its parents. Positions counts them
	// before that dedup, run after it.
	Entries int64
}

// Positions appends to dst the edges from each non-terminal position to
// its distinct canonical children of ply next, naming the parent, (blob,
// index), as next's record says (runstore.Ply.RunRef): with
// TerminalSources, the edges to a child that is not terminal name none
// (dedup.Ref{}, layout).
func Positions(b *board.Board, positions []board.Position, blob uint32, next *runstore.Ply, dst []dedup.Entry) ([]dedup.Entry, Stats) {
	return children(b, positions, reserve(dst, movesAbout(b, positions)), func(i int, kids []board.Position, terminal uint64, es []dedup.Entry) []dedup.Entry {
		for j, k := range kids {
			es = append(es, dedup.Entry{Pos: k, Ref: next.RunRef(dedup.Ref{Blob: blob, Index: uint32(i)}, terminal>>j&1 == 1)})
		}
		return es
	})
}

// reserve returns dst with room for the edges of positions of about
// moves moves (movesAbout): their number of moves bounds the edges, and
// if dst has not the room for an eighth more than that, it grows to it,
// so that a buffer reused for the next task of the ply (of about as many
// moves) rarely grows again.
func reserve[E any](dst []E, moves int) []E {
	if cap(dst)-len(dst) < moves {
		return slices.Grow(dst, moves+moves/8)
	}
	return dst
}

// children appends to dst, for each non-terminal position i, what
// edges(i, kids, terminal, es) appends to es for its distinct canonical
// children kids, bit j of terminal telling whether kids[j] is terminal
// (kids is scratch space, which edges may overwrite): one call a
// position, not a child, whose cost was a thirtieth of the
// generation's.
func children[E any](b *board.Board, positions []board.Position, dst []E, edges func(i int, kids []board.Position, terminal uint64, es []E) []E) ([]E, Stats) {
	var st Stats
	es := dst
	kids := make([]board.Position, 0, 32)
	for i, p := range positions {
		var moves int
		var terminal uint64
		kids, moves, terminal = b.ChildrenTerminal(p, kids[:0])
		if moves == 0 {
			st.Terminal++
			continue
		}
		st.Edges += int64(moves)
		es = edges(i, kids, terminal, es)
	}
	st.Entries = int64(len(es) - len(dst))
	return es, st
}

// movesSampled is how many positions movesAbout counts the moves of.
const movesSampled = 4096

// movesAbout returns the number of moves of positions: exactly for up to
// movesSampled positions, else estimated from that many evenly spaced.
// Counting them all generated every position's moves once more, a
// thirtieth of the generation's CPU at 8x8 ply 14; a sample of
// thousands misses the total by well under the eighth children adds.
func movesAbout(b *board.Board, positions []board.Position) int {
	stride := max(1, len(positions)/movesSampled)
	moves, counted := 0, 0
	for i := 0; i < len(positions); i += stride {
		moves += bits.OnesCount64(b.Moves(positions[i]))
		counted++
	}
	if counted == 0 {
		return 0
	}
	return moves * len(positions) / counted
}

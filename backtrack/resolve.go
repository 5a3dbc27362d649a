package backtrack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/internal/reuse"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/solve"
	"github.com/reversi-cloud/reversi/storage"
	"github.com/reversi-cloud/reversi/task"
)

// ResolveHandler handles R messages: it decides the results of one final
// blob of a ply from the notices its children sent, stores them as the
// blob's results blob, and sends notices of the known results to the
// parents named in the blob's backtracking rows. Results flow back one ply
// at a time, from the target ply to the start. At the target ply of a run
// that solves (runstore.Config.Solve), it solves every non-terminal
// position exactly instead, so exact scores flow back to the start; in
// the solve modes root and wld, only as far as its parents need (see
// frontier), and bounds flow back with the exact scores.
//
// Each R message is one item of the ply's resolution stage
// (runstore.ResolutionStage), done by task.Items.
//
// Crash points: the results blob and the notice rows have names derived
// from the blob, and their content depends only on the notices, which are
// complete before any resolve task of this ply starts; so a retry
// rewrites the same data, and needs no compensation message. The
// resolution marker, added last, makes a redelivery skip straight to the
// follow-up.
var ResolveHandler task.Handler = task.Items[runstore.Resolution]{
	Stage: task.Whole((*runstore.Store).ResolutionStage),
	Ready: childResolved,
	Work: func(ctx context.Context, t *task.Task, p *runstore.Ply, m message.Message) (runstore.Resolution, task.Cover, error) {
		r, err := resolveBlob(ctx, t, p, m.Index, m.Blob)
		return r, nil, err // results and notices have fixed names: nothing to compensate
	},
	FollowUp: func(ctx context.Context, t *task.Task, st runstore.Stage[runstore.Resolution], i int) error {
		return t.Flow.Resolved(ctx, t, st.Ply().Ply, i)
	},
}

// childResolved refuses to resolve a ply before the next one is: R
// messages of a ply are sent only once the next ply is resolved, and an
// early one would decide from missing notices.
func childResolved(ctx context.Context, t *task.Task, p *runstore.Ply) error {
	ply := p.Ply
	if ply >= t.Run.Target {
		return nil
	}
	child, err := t.Run.Store.PlySince(ctx, ply+1, runstore.Resolved)
	if err != nil && !errors.Is(err, runstore.ErrNoPly) {
		return err
	}
	if child != nil && !child.State.AtLeast(runstore.Resolved) {
		return message.Badf("ply %d is not resolved yet, so ply %d cannot be resolved", ply+1, ply)
	}
	return nil
}

// resolveBlob decides the results of final blob index of a ply, named
// blob (or, when blob is empty, as its row says), writes them and the
// notices to its parents, and returns the marker that records it.
func resolveBlob(ctx context.Context, t *task.Task, p *runstore.Ply, index int, blob string) (runstore.Resolution, error) {
	run, store, ply := t.Run, t.Run.Store, p.Ply
	if blob == "" { // a message of a release before R named its blob
		final, err := store.Final(ctx, ply, index)
		if err != nil {
			return runstore.Resolution{}, err
		}
		blob = final.Blob
	}
	// The merges list a blob's terminal positions beside its backtracking
	// rows, unless they are of a release before the lists. A ply that
	// keeps rows for its terminal positions only (few: 1,321 of 137
	// million at 8x8 ply 12) is a target ply that the run does not
	// solve: its list is all it needs. Elsewhere the list spares testing
	// every position for the end of the game.
	onlyTerminal := ply > 0 && p.TerminalSources
	var sources, list []byte // the backtracking rows, and the terminal list
	var err error
	if ply > 0 {
		if sources, list, err = store.SourcesAndTerminals(ctx, blob); err != nil {
			return runstore.Resolution{}, err
		}
		if onlyTerminal && list != nil {
			return resolveListed(ctx, t, p, index, blob, sources, list)
		}
	}
	buf := resolveBuffers.Get()
	defer resolveBuffers.Put(buf)
	if buf.keys, err = run.ReadKeysTo(ctx, blob, buf.keys[:0]); err != nil {
		return runstore.Resolution{}, err
	}
	keys := buf.keys
	var listed []int64 // the terminal positions' indexes, when list says
	if list != nil {
		l, err := packed.DecodeTerminalList(run.Board, list)
		if err == nil {
			err = l.Matches(keys)
		}
		if err != nil {
			return runstore.Resolution{}, fmt.Errorf("terminal positions of %s: %w", blob, err)
		}
		listed = l.Indexes
	}
	squares := run.Board.Size() * run.Board.Size()
	var tallies []Tally // the children's notices; the target ply has none
	if ply < run.Target {
		buf.tallies = append(buf.tallies[:0], make([]Tally, len(keys))...)
		tallies = buf.tallies
		if err := readTallies(ctx, store, ply, index, keys, squares, tallies); err != nil {
			return runstore.Resolution{}, err
		}
	}
	var solver *solve.Solver
	var front *frontier
	var frontResults []board.Result
	var frontScores []Score
	if ply >= run.Target && run.Solve {
		solver = solvers.Get().(*solve.Solver)
		defer solvers.Put(solver)
		if run.SolveMode.Pruned() {
			if front, err = newFrontier(ctx, t, ply, index, blob, keys); err != nil {
				return runstore.Resolution{}, err
			}
			if frontResults, frontScores, err = front.solveAll(ctx, solver); err != nil {
				return runstore.Resolution{}, fmt.Errorf("solving ply %d blob %d: %w", ply, index, err)
			}
		}
	}
	d := decider{board: run.Board, target: ply >= run.Target, pruned: run.SolveMode.Pruned(), squares: squares,
		tallies: tallies, solver: solver, kids: make([]board.Position, 0, 32)}
	results := buf.results[:0]
	// Whether a position is terminal is worked out once: decide needs it,
	// and so do the backtracking rows of onlyTerminal.
	terminals := buf.terminals[:0]
	defer func() { buf.results, buf.terminals = results, terminals }()
	var counts [4]int64
	unknown := Word(board.Unknown, Score{})
	for i, pos := range keys {
		var terminal bool
		switch {
		case list != nil:
			if terminal = len(listed) > 0 && listed[0] == int64(i); terminal {
				listed = listed[1:]
				if err := listedTerminal(run.Board, blob, int64(i), pos); err != nil {
					return runstore.Resolution{}, err
				}
			}
		case front == nil || onlyTerminal:
			terminal = run.Board.Terminal(pos)
		}
		if terminal && onlyTerminal {
			terminals = append(terminals, i)
		}
		if front == nil && !terminal && d.decidesNothing(i) {
			// Most positions, and all but the terminal ones of a target
			// ply: spared the call to decide.
			results = append(results, unknown)
			counts[board.Unknown]++
			continue
		}
		var res board.Result
		var score Score
		if front != nil {
			res, score = frontResults[i], frontScores[i]
		} else if res, score, err = d.decide(ctx, i, pos, terminal); err != nil {
			return runstore.Resolution{}, fmt.Errorf("solving position %d of ply %d blob %d: %w", i, ply, index, err)
		}
		results = append(results, Word(res, score))
		counts[res]++
	}
	if front != nil {
		t.Log.Info("frontier solved as far as needed", "ply", ply, "blob", index, "mode", run.SolveMode,
			"solved", front.counts[frontierSolved], "bounded", front.counts[frontierBounded], "skipped", front.counts[frontierSkipped])
	}
	return report(ctx, t, ply, index, blob, sources, results, counts, !onlyTerminal, terminals)
}

// report writes the results of final blob index of a ply, sends their
// notices to its parents as the blob's backtracking rows, sources, name
// them (for every position if all, else for those of rows), and returns
// the blob's resolution marker.
func report(ctx context.Context, t *task.Task, ply, index int, blob string, sources []byte, results []uint16, counts [4]int64, all bool, rows []int) (runstore.Resolution, error) {
	run := t.Run
	squares := run.Board.Size() * run.Board.Size()
	if err := run.Blobs.Put(ctx, runstore.ResultsBlobName(ply, index), packed.EncodeResults(results)); err != nil {
		return runstore.Resolution{}, fmt.Errorf("writing results of ply %d blob %d: %w", ply, index, err)
	}
	if ply > 0 {
		if err := sendNotices(ctx, run.Store, ply, index, blob, sources, results, all, rows, squares); err != nil {
			return runstore.Resolution{}, err
		}
	}
	return resolution(ply, index, counts, results, squares), nil
}

// resolveListed is resolveBlob for a blob of a target ply that the run
// does not solve, which keeps backtracking rows for its terminal
// positions only, and whose merge listed those (packed.TerminalList):
// every other position is unknown, so the blob's keys are not read, nor
// each of them tested again (at 8x8 ply 14, 46,489 terminal positions
// among 6,158,976,460).
func resolveListed(ctx context.Context, t *task.Task, p *runstore.Ply, index int, blob string, sources, list []byte) (runstore.Resolution, error) {
	run := t.Run
	l, err := packed.DecodeTerminalList(run.Board, list)
	if err == nil && l.Count > int64(run.FinalPositions(p.Ply)) {
		err = fmt.Errorf("%w: a terminal list of %d positions, where the ply's blobs hold at most %d", packed.ErrCorrupt, l.Count, run.FinalPositions(p.Ply))
	}
	if err != nil {
		return runstore.Resolution{}, fmt.Errorf("terminal positions of %s: %w", blob, err)
	}
	buf := resolveBuffers.Get()
	defer resolveBuffers.Put(buf)
	results := slices.Grow(buf.results[:0], int(l.Count))[:l.Count]
	rows := buf.terminals[:0]
	defer func() { buf.results, buf.terminals = results, rows }()
	unknown := Word(board.Unknown, Score{})
	for i := range results {
		results[i] = unknown
	}
	squares := run.Board.Size() * run.Board.Size()
	d := decider{board: run.Board, target: true, squares: squares}
	var counts [4]int64
	counts[board.Unknown] = l.Count - int64(len(l.Indexes))
	for j, i := range l.Indexes {
		pos := l.Positions[j]
		if err := listedTerminal(run.Board, blob, i, pos); err != nil {
			return runstore.Resolution{}, err
		}
		res, score, err := d.decide(ctx, int(i), pos, true)
		if err != nil {
			return runstore.Resolution{}, err
		}
		results[i] = Word(res, score)
		counts[res]++
		rows = append(rows, int(i))
	}
	return report(ctx, t, p.Ply, index, blob, sources, results, counts, false, rows)
}

// listedTerminal checks position i of blob, pos, which its terminal list
// names: a few a blob, tested again because a listed position is decided
// by its discs alone.
func listedTerminal(b *board.Board, blob string, i int64, pos board.Position) error {
	if b.Terminal(pos) {
		return nil
	}
	return fmt.Errorf("terminal positions of %s: %w: position %d, %v, is not terminal", blob, packed.ErrCorrupt, i, pos)
}

// decider decides the positions of one final blob one by one, but for a
// frontier's (solve modes root and wld), which it solves as a whole.
type decider struct {
	board   *board.Board
	target  bool // the blob is of the run's target ply
	pruned  bool // solve mode root or wld: bounds where no exact score
	squares int
	tallies []Tally       // the children's notices, by position
	solver  *solve.Solver // at the target ply of a run that solves
	kids    []board.Position
}

// decidesNothing says that position i, if not terminal, is unknown
// whatever its moves (a non-terminal position has at least one): it is
// of the target ply of a run that does not solve it, or no child
// reported a result. That spares listing the children of most positions.
func (d *decider) decidesNothing(i int) bool {
	return d.solver == nil && (d.target || d.tallies[i].Known == 0 && d.tallies[i].Bounded == 0)
}

// decide returns the result and score of position i, pos, which is
// terminal or which decidesNothing does not cover: resolveBlob gives the
// others the unknown word without asking.
func (d *decider) decide(ctx context.Context, i int, pos board.Position, terminal bool) (board.Result, Score, error) {
	switch {
	case terminal:
		return d.board.Result(pos), TerminalScore(d.board, pos), nil
	case d.solver != nil:
		if err := ctx.Err(); err != nil {
			return board.Unknown, Score{}, err
		}
		score, err := solveScore(ctx, d.solver, d.board, pos)
		return score.Result(), score, err
	}
	d.kids, _ = d.board.Children(pos, d.kids[:0])
	res := Decide(pos.Side, len(d.kids), d.tallies[i])
	score := d.tallies[i].Score(len(d.kids))
	if !score.Exact && d.pruned {
		res, score = boundedResult(pos.Side, len(d.kids), d.squares, res, d.tallies[i])
	}
	return res, score, nil
}

// readTallies adds up the notices that final blob index of a ply received
// from its children, one tally a position of keys.
func readTallies(ctx context.Context, store *runstore.Store, ply, index int, keys []board.Position, squares int, tallies []Tally) error {
	payloads, err := store.Notices(ctx, ply, index)
	if err != nil {
		return err
	}
	for _, payload := range payloads {
		err := DecodeNotices(payload, squares, func(n Notice) {
			if int(n.Index) < len(tallies) {
				tallies[n.Index].Add(keys[n.Index].Side, n)
			}
		})
		if err != nil {
			return fmt.Errorf("notices for ply %d blob %d: %w", ply, index, err)
		}
	}
	return nil
}

// resolution is the marker of a resolved final blob: its result counts,
// and at ply 0, which holds only the start position, the run's score.
func resolution(ply, index int, counts [4]int64, results []uint16, squares int) runstore.Resolution {
	r := runstore.Resolution{Index: index, Counts: runstore.Counts{
		Black: counts[board.BlackWins], White: counts[board.WhiteWins], Draws: counts[board.Draw], Unknown: counts[board.Unknown]}}
	if ply == 0 {
		if _, s := FromWord(results[0], squares); s.Exact {
			r.Scored, r.Score = true, int64(s.Diff)
			r.ScoreBlack, r.ScoreWhite = int64(s.Black), int64(s.White)
		}
	}
	return r
}

// boundedResult is the result and score of a position whose children's
// notices give no exact score, in the solve modes root and wld: the
// minimax of their bounds (res is what Decide made of their results).
func boundedResult(side board.Color, children, squares int, res board.Result, t Tally) (board.Result, Score) {
	lo, hi := t.Bounds(side, children, squares)
	score := IntervalScore(lo, hi, squares)
	if score.Exact && t.Scored > 0 && t.Best.Exact && int(t.Best.Diff) == lo {
		score = t.Best // keeps a final count, when the best child has one
	}
	if res == board.Unknown {
		res = score.Result()
	}
	return res, score
}

// resolveBuffer is a resolve task's working memory: the positions of
// its final blob and their result words. At the target ply, the run's
// largest, these are nearly all it allocates.
type resolveBuffer struct {
	keys      []board.Position
	results   []uint16
	terminals []int   // indexes of the terminal positions of keys
	tallies   []Tally // of keys, from their children's notices
}

// resolveBuffers keeps the buffers of finished resolve tasks for the
// next ones, one for each loop resolving at once, as expand's do.
var resolveBuffers = reuse.List[resolveBuffer]{Idle: 10 * time.Second}

// solvers keeps the solvers of the resolve tasks that solve the target
// ply, one per task at a time: a solver's transposition table carries
// over from one position to the next, and positions of one ply share
// much of their endgames.
var solvers = sync.Pool{New: func() any {
	s, err := solve.New(solve.Options{})
	if err != nil {
		panic(err) // the zero Options are valid
	}
	return s
}}

// solveScore solves p exactly: its score, black minus white. It stops
// when ctx is done (a lost lease, a stopping worker).
func solveScore(ctx context.Context, s *solve.Solver, b *board.Board, p board.Position) (Score, error) {
	r, err := s.SolveContext(ctx, b, p)
	if err != nil {
		return Score{}, err
	}
	if p.Side == board.White {
		r.Score = -r.Score
	}
	return DiffScore(r.Score), nil
}

// sendNotices reports each known result of final blob j of a ply to its
// parents: one payload per parent blob. The blob's backtracking rows,
// payload, cover every position if all, else the positions listed in
// rows, in order. Only those are visited: at a target ply, whose rows are for its
// terminal positions, a handful of a blob's hundreds of thousands. And
// only the rows of known results are decoded (packed.SourceReader.Skip):
// short of the target, some tens of a blob's hundreds of thousands of
// positions are known, and decoding every row cost a third of the
// resolution of 8x8 ply 13 on the way to 14.
func sendNotices(ctx context.Context, store *runstore.Store, ply, j int, blob string, payload []byte, results []uint16, all bool, rows []int, squares int) error {
	byParent := map[uint32][]Notice{}
	sr := packed.NewSourceReader(bytes.NewReader(payload))
	var refs []Ref
	n := len(rows)
	if all {
		n = len(results)
	}
	// read reads the row of the k-th position the payload covers,
	// passing over those since the last it read.
	at := 0
	read := func(k int) bool {
		var ok bool
		if refs, ok = sr.Skip(int64(k-at), refs); ok {
			refs, ok = sr.Next(refs)
		}
		at = k + 1
		return ok
	}
	unknown := Word(board.Unknown, Score{}) // most words: no decoding
	for k := range n {
		i := k
		if !all {
			i = rows[k]
		}
		if results[i] == unknown {
			continue
		}
		res, score := FromWord(results[i], squares)
		if res == board.Unknown && score == (Score{}) {
			continue
		}
		if !read(k) {
			return rowsEnd(sr, blob, n)
		}
		for _, ref := range refs {
			byParent[ref.Blob] = append(byParent[ref.Blob], Notice{Index: ref.Index, Result: res, Score: score})
		}
	}
	// The payload must cover all n positions, whichever were read.
	if _, ok := sr.Skip(int64(n-at), refs); !ok {
		return rowsEnd(sr, blob, n)
	}
	parents := make([]uint32, 0, len(byParent))
	for p := range byParent {
		parents = append(parents, p)
	}
	slices.Sort(parents)
	for _, p := range parents {
		ns := byParent[p]
		slices.SortFunc(ns, func(a, b Notice) int { return int(a.Index) - int(b.Index) })
		if err := store.PutNotices(ctx, ply, j, int(p), AppendNotices(nil, ns)); err != nil {
			return err
		}
	}
	return nil
}

// rowsEnd is the error of backtracking rows that ended before n
// positions.
func rowsEnd(sr *packed.SourceReader, blob string, n int) error {
	if sr.Err() != nil {
		return fmt.Errorf("backtracking rows of %s: %w", blob, sr.Err())
	}
	return fmt.Errorf("backtracking rows of %s cover %d of %d positions", blob, sr.Count(), n)
}

// ReadResults reads the results of final blob index of a ply: one word
// (see FromWord) per position, in the blob's order.
func ReadResults(ctx context.Context, blobs storage.Container, ply, index int) ([]uint16, error) {
	name := runstore.ResultsBlobName(ply, index)
	b, err := blobs.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading results of ply %d blob %d: %w", ply, index, err)
	}
	words, err := packed.DecodeResults(nil, b)
	if err != nil {
		return nil, fmt.Errorf("results blob %s: %w", name, err)
	}
	return words, nil
}

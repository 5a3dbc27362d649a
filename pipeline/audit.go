package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/packed"
	"github.com/reversi-cloud/reversi/report"
	"github.com/reversi-cloud/reversi/runstore"
	"github.com/reversi-cloud/reversi/storage"
)

// Finding is one thing an audit found wrong. A warning is something that
// may be wrong but may also be work still under way (a blob a pending
// compensation message may yet delete); it does not fail the audit.
type Finding struct {
	Warning bool
	Text    string
}

func (f Finding) String() string {
	if f.Warning {
		return "warning: " + f.Text
	}
	return "error: " + f.Text
}

// Audit is the outcome of auditing a run.
type Audit struct {
	Findings []Finding
	Complete bool // the run is complete
	Plies    int  // ply records read
	Records  int  // run records read
	Blobs    int  // blobs listed
	Work     int  // approximate length of the work and compensation queues
	Poison   int  // approximate length of the poison queue
}

// Failed reports whether any finding is an error.
func (a *Audit) Failed() bool {
	for _, f := range a.Findings {
		if !f.Warning {
			return true
		}
	}
	return false
}

// Summary is a one-line account of what the audit looked at.
func (a *Audit) Summary() string {
	errs, warns := 0, 0
	for _, f := range a.Findings {
		if f.Warning {
			warns++
		} else {
			errs++
		}
	}
	state := "in progress"
	if a.Complete {
		state = "complete"
	}
	verdict := "clean"
	if errs > 0 {
		verdict = fmt.Sprintf("%d errors", errs)
	}
	if warns > 0 {
		verdict += fmt.Sprintf(", %d warnings", warns)
	}
	return fmt.Sprintf("check %s: run %s; %d plies, %d records, %d blobs, %d work messages, %d poison messages",
		verdict, state, a.Plies, a.Records, a.Blobs, a.Work, a.Poison)
}

// Report is the audit as a report gives it.
func (a *Audit) Report() *report.Audit {
	out := &report.Audit{Problems: []string{}, Summary: a.Summary()}
	for _, f := range a.Findings {
		if f.Warning {
			out.Warnings = append(out.Warnings, f.Text)
		} else {
			out.Problems = append(out.Problems, f.Text)
		}
	}
	return out
}

func (a *Audit) errorf(format string, args ...any) {
	a.Findings = append(a.Findings, Finding{Text: fmt.Sprintf(format, args...)})
}

// checkTerminalList checks the terminal list of final blob f of a ply
// against its row: as many positions, and as many of them terminal.
func (a *Audit) checkTerminalList(r *Run, ply int, f runstore.FinalBlob, data []byte) {
	l, err := packed.DecodeTerminalList(r.Board, data)
	switch {
	case err != nil:
		a.errorf("ply %d: final blob %d (%s): %v", ply, f.Index, f.Blob, err)
	case l.Count != f.Count || int64(len(l.Indexes)) != f.Terminal:
		a.errorf("ply %d: final blob %d (%s) lists %d terminal positions of %d, where its row says %d of %d",
			ply, f.Index, f.Blob, len(l.Indexes), l.Count, f.Terminal, f.Count)
	}
}

func (a *Audit) warnf(format string, args ...any) {
	a.Findings = append(a.Findings, Finding{Warning: true, Text: fmt.Sprintf(format, args...)})
}

// auditState is what the tables say at one moment: every ply record
// and, per ply, its expansion markers (while it is open), its committed
// merge outputs, its final blobs, the blob names its records
// name, and its resolution markers.
type auditState struct {
	plies       map[int]*runstore.Ply
	recs        map[int]runstore.Records
	named       map[int]map[string]bool
	resolutions map[int][]runstore.Resolution
}

func (r *Run) readAuditState(ctx context.Context) (*auditState, error) {
	plies, err := r.store.Plies(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading ply records: %w", err)
	}
	s := &auditState{plies: map[int]*runstore.Ply{}, recs: map[int]runstore.Records{},
		named: map[int]map[string]bool{}, resolutions: map[int][]runstore.Resolution{}}
	for _, p := range plies {
		s.plies[p.Ply] = p
		var recs runstore.Records
		if !p.State.AtLeast(runstore.Final) {
			if recs, err = r.store.MergeRecords(ctx, p); err != nil {
				return nil, err
			}
		} else {
			if recs.Merged, err = r.store.MergedBlobs(ctx, p); err != nil {
				return nil, err
			}
			// A Final ply's dispatch leaves write its final blob rows;
			// until the last one has, the merged blobs say what they are.
			if p.State == runstore.Final {
				recs.Finals, err = r.store.FinalsFor(ctx, p, runstore.Span{Lo: 0, Hi: p.Finals})
			} else {
				recs.Finals, err = r.store.Finals(ctx, p.Ply)
			}
			if err != nil {
				return nil, err
			}
			if s.resolutions[p.Ply], err = r.store.ResolutionStage(p).Markers(ctx); err != nil {
				return nil, err
			}
		}
		s.recs[p.Ply] = recs
		s.named[p.Ply] = runstore.Named(p, recs)
	}
	return s, nil
}

// inUse applies the one in-use rule (runstore.BlobInUse) to a blob.
func (s *auditState) inUse(ply int, name string) bool {
	return runstore.BlobInUse(s.plies[ply], name, s.named[ply])
}

// Audit checks a run's storage for damage: blobs no record refers to
// (unless a pending compensation message may still delete them), records
// whose blob is missing or short, final blobs of the wrong size or without
// backtracking rows, overlapping final blobs in a complete ply,
// results missing for resolved blobs, messages in the poison queue,
// messages left in the work queue of a complete run, and an incomplete run
// with nothing left to do.
//
// It reads while workers may be running. To keep live work from looking
// like damage, it reads the tables before listing the blobs (a record's
// blob is written before the record, and blobs are only deleted when
// their ply completes, which changes the ply record's ETag: a missing blob
// counts only if its ply record did not change meanwhile), and reads them
// again after listing to decide which blobs are unreferenced. Blobs of an
// open ply that no record names are not counted: merges leave their inputs
// behind until the ply's completion sweeps its folder. Elsewhere an
// unreferenced blob is an error only when no compensation message could
// still cover it: the work queue is empty, or the run is complete and
// every message in it was seen and none names the blob. Delayed
// compensation messages are invisible to Peek but count in the queue's
// length, which Azure never reports below the true count.
func (r *Run) Audit(ctx context.Context) (*Audit, error) {
	a := &Audit{}
	done, err := r.Done(ctx)
	if err != nil {
		return nil, err
	}
	a.Complete = done != nil
	before, err := r.readAuditState(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.blobs.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("listing the blobs of run %s: %w", r.Config.Name, err)
	}
	a.Blobs = len(list)
	sizes := make(map[string]int64, len(list))
	for _, b := range list {
		sizes[b.Name] = b.Size
	}
	if a.Work, err = r.Queued(ctx); err != nil {
		return nil, fmt.Errorf("reading the queue lengths: %w", err)
	}
	var visible []storage.Message
	for _, q := range r.queues() {
		msgs, err := q.Peek(ctx, storage.MaxDequeue)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("peeking at queue %s: %w", q.Name(), err)
		}
		visible = append(visible, msgs...)
	}
	after, err := r.readAuditState(ctx)
	if err != nil {
		return nil, err
	}
	a.Plies = len(after.plies)
	for _, recs := range after.recs {
		a.Records += len(recs.Merged) + len(recs.Expansions) + len(recs.Combines)
	}

	for _, ply := range sortedPlies(before.plies) {
		if !sameRecord(before.plies, after.plies, ply) {
			continue // the ply moved on while we listed; its blobs are checked on the next audit
		}
		p := before.plies[ply]
		// Blobs are spent (and deleted) without a change to the ply
		// record, and only ever become spent: the state read after the
		// listing says which may be gone.
		spent := runstore.Spent(p, after.recs[ply])
		if err := r.auditPly(ctx, a, p, before, sizes, spent); err != nil {
			return nil, err
		}
	}

	r.auditOrphans(a, after, list, visible)
	auditQueues(a, visible)
	if err := r.auditPoison(ctx, a); err != nil {
		return nil, err
	}
	// A sharded queue's count can miss a message moving between shards
	// (stall.go): a run whose ply records moved while it was read is
	// making progress.
	if !a.Complete && a.Work == 0 && sameRecords(before.plies, after.plies) {
		if d, err := r.Done(ctx); err == nil && d == nil {
			a.errorf("the run is not complete but its work queue is empty: nothing is left to make progress")
		}
	}
	return a, nil
}

func sortedPlies(m map[int]*runstore.Ply) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// auditPly checks one ply's records against the blobs.
func (r *Run) auditPly(ctx context.Context, a *Audit, p *runstore.Ply, s *auditState, sizes map[string]int64, spent map[string]bool) error {
	recs := s.recs[p.Ply]
	isFinal := map[string]bool{}
	for _, f := range recs.Finals {
		isFinal[f.Blob] = true
	}
	auditWork(a, p, recs, isFinal, sizes, spent)
	if !p.State.AtLeast(runstore.Final) {
		return nil
	}
	if err := r.auditFinals(ctx, a, p, recs, isFinal, sizes); err != nil {
		return err
	}
	r.auditResults(ctx, a, p, recs.Finals, s.resolutions[p.Ply], sizes)
	return nil
}

// auditWork checks the markers of a ply's expansion and combine tasks
// and the blobs its merges wrote, but for final blobs (auditFinals). A
// spent blob may be deleted already: only its marker is checked.
func auditWork(a *Audit, p *runstore.Ply, recs runstore.Records, isFinal map[string]bool, sizes map[string]int64, spent map[string]bool) {
	for _, e := range recs.Expansions {
		if e.Blob != "" { // else the task found no edges
			auditCuts(a, fmt.Sprintf("ply %d: expansion task %d", p.Ply, e.Task), e.Blob, e.Cuts, p.Buckets, sizes, spent[e.Blob])
		}
	}
	for _, c := range recs.Combines {
		if c.Level >= len(p.Levels) || c.Index >= p.Levels[c.Level].Tasks() {
			a.errorf("ply %d: a combine marker names task %d of level %d, which the ply's combine levels %v lack", p.Ply, c.Index, c.Level+1, p.Levels)
			continue
		}
		if c.Blob != "" {
			l := p.Levels[c.Level]
			span := runstore.SpanOf(c.Index%l.Ranges, p.Buckets, l.Ranges)
			auditCuts(a, fmt.Sprintf("ply %d: combine task %d", p.Ply, p.CombineIndex(c.Level, c.Index)), c.Blob, c.Cuts, span.Hi-span.Lo, sizes, spent[c.Blob])
		}
	}
	for _, run := range recs.Merged {
		if isFinal[run.Blob] {
			continue // checked as a final blob
		}
		if _, ok := sizes[run.Blob]; !ok {
			a.errorf("ply %d: merged blob row %s names blob %s, which is missing", p.Ply, run.Key, run.Blob)
		}
	}
}

// auditFinals checks a Final ply's final blobs: their rows against its
// record and its merged blob rows, their positions, their backtracking
// rows and their order.
func (r *Run) auditFinals(ctx context.Context, a *Audit, p *runstore.Ply, recs runstore.Records, isFinal map[string]bool, sizes map[string]int64) error {
	finals := recs.Finals
	if len(finals) != p.Finals {
		a.errorf("ply %d has %d final blob rows, but its record says %d", p.Ply, len(finals), p.Finals)
	}
	for _, f := range finals {
		size, ok := sizes[f.Blob]
		if !ok {
			a.errorf("ply %d: final blob %d (%s) is missing", p.Ply, f.Index, f.Blob)
		} else if ix, err := packed.OpenKeyIndex(storage.BlobReaderAt(ctx, r.blobs, f.Blob), size); err != nil {
			a.errorf("ply %d: final blob %d (%s): %v", p.Ply, f.Index, f.Blob, err)
		} else if ix.Positions != f.Count {
			a.errorf("ply %d: final blob %d (%s) holds %d positions, not %d", p.Ply, f.Index, f.Blob, ix.Positions, f.Count)
		}
		if p.Ply == 0 || !ok {
			continue
		}
		var has bool
		if p.TerminalSources {
			// The rows are of the few terminal positions: read them with
			// the blob's terminal list, and check the list. A blob merged
			// before the lists has rows and no list.
			rows, list, err := r.store.SourcesAndTerminals(ctx, f.Blob)
			if err != nil {
				return err
			}
			if list != nil {
				a.checkTerminalList(r, p.Ply, f, list)
				continue
			}
			has = rows != nil
		} else {
			var err error
			if has, err = r.store.HasSources(ctx, f.Blob); err != nil {
				return err
			}
		}
		if !has {
			a.errorf("ply %d: final blob %d (%s) has no backtracking rows", p.Ply, f.Index, f.Blob)
		}
	}
	named := map[string]bool{}
	for _, run := range recs.Merged {
		named[run.Blob] = true
		if !isFinal[run.Blob] {
			a.errorf("ply %d is final but merged blob row %s names blob %s, which is not one of its final blobs", p.Ply, run.Key, run.Blob)
		}
	}
	for _, f := range finals {
		if !named[f.Blob] {
			a.errorf("ply %d: final blob %d (%s) has no merged blob row", p.Ply, f.Index, f.Blob)
		}
	}
	auditOrder(a, p.Ply, finals)
	return nil
}

// auditResults checks that each resolved final blob of a ply has its
// results blob, with a result for each position.
func (r *Run) auditResults(ctx context.Context, a *Audit, p *runstore.Ply, finals []runstore.FinalBlob, resolutions []runstore.Resolution, sizes map[string]int64) {
	for _, res := range resolutions {
		if res.Index >= len(finals) {
			a.errorf("ply %d: a resolution marker names final blob %d, which the ply lacks", p.Ply, res.Index)
			continue
		}
		name := runstore.ResultsBlobName(p.Ply, res.Index)
		if _, ok := sizes[name]; !ok {
			a.errorf("ply %d: final blob %d is resolved but its results blob %s is missing", p.Ply, res.Index, name)
		} else if words, err := backtrack.ReadResults(ctx, r.blobs, p.Ply, res.Index); err != nil {
			a.errorf("ply %d: %v", p.Ply, err)
		} else if want := finals[res.Index].Count; int64(len(words)) != want {
			a.errorf("ply %d: results blob %s holds %d results, not %d", p.Ply, name, len(words), want)
		}
	}
}

// auditCuts checks a run of edges cut into buckets: what names it, its
// blob, its cuts, and the buckets it should be cut into.
func auditCuts(a *Audit, what, blob string, cuts []int64, buckets int, sizes map[string]int64, spent bool) {
	size, ok := sizes[blob]
	switch {
	case !ok && !spent:
		a.errorf("%s names blob %s, which is missing", what, blob)
	case len(cuts) == 0:
		a.errorf("%s names blob %s but records no cuts", what, blob)
	case ok && cuts[len(cuts)-1] != size:
		a.errorf("%s cuts blob %s into buckets ending at %d, but it holds %d bytes", what, blob, cuts[len(cuts)-1], size)
	case len(cuts) != buckets+1:
		a.errorf("%s cuts blob %s into %d buckets, but it should be %d", what, blob, len(cuts)-1, buckets)
	}
}

// auditOrder reports final blobs of a complete ply that are not in
// ascending, disjoint key order: each must start above the previous one's
// end.
func auditOrder(a *Audit, ply int, finals []runstore.FinalBlob) {
	for i := 1; i < len(finals); i++ {
		prev, f := finals[i-1], finals[i]
		if board.Compare(prev.Max, f.Min) >= 0 {
			a.errorf("ply %d is complete but final blobs %d [%s, %s] and %d [%s, %s] overlap or are out of order", ply,
				prev.Index, prev.Min.Text(), prev.Max.Text(), f.Index, f.Min.Text(), f.Max.Text())
		}
	}
}

// auditOrphans reports blobs nothing refers to. A blob that a visible
// compensation message covers (runstore.Covers) is not. Otherwise it is an error when no
// compensation message can be pending: the work queue is empty, or every
// message in it was seen.
func (r *Run) auditOrphans(a *Audit, s *auditState, list []storage.BlobInfo, visible []storage.Message) {
	covered := map[string]bool{}
	for _, m := range visible {
		if msg, err := message.ParseMessage(r.shared.Origin, m.Text); err == nil && msg.Kind == message.KindCompensation {
			covered[msg.Blob] = true
		}
	}
	// While the run is in progress, a task in flight may be between
	// writing a blob and naming it, and its compensation message is
	// invisible: only an empty queue rules that out.
	sawAll := a.Work == 0 || a.Complete && a.Work <= len(visible)
	for _, b := range list {
		name, ok := runstore.ParseBlobName(b.Name)
		if ok && s.inUse(name.Ply, b.Name) || covered[b.Name] || covered[runstore.CoverName(b.Name)] {
			continue
		}
		if p := s.plies[name.Ply]; ok && p != nil && !p.State.AtLeast(runstore.Final) {
			continue // an open ply's spent blobs stay until it is final and swept
		}
		switch {
		case !ok:
			a.errorf("blob %s belongs to no ply", b.Name)
		case sawAll:
			a.errorf("orphan blob %s: no record refers to it", b.Name)
		default:
			a.warnf("blob %s is unreferenced (a compensation may still be pending)", b.Name)
		}
	}
}

// auditQueues reports the messages left in a complete run's work queue.
// Delayed compensation messages count in the length but are invisible to
// Peek, so those are reported by number only.
func auditQueues(a *Audit, visible []storage.Message) {
	if !a.Complete || a.Work == 0 {
		return
	}
	for _, m := range visible {
		a.errorf("work queue: message %q left in a complete run (dequeued %d times)", message.Clip(m.Text), m.DequeueCount)
	}
	if rest := a.Work - len(visible); rest > 0 {
		a.errorf("work queue: %d more messages left in a complete run, not visible (delayed compensation messages or tasks in flight)", rest)
	}
}

// auditPoison reports the messages in the poison queue, with their reasons.
func (r *Run) auditPoison(ctx context.Context, a *Audit) error {
	n, err := r.poison.ApproximateLength(ctx)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the poison queue length: %w", err)
	}
	a.Poison = n
	if n == 0 {
		return nil
	}
	msgs, err := r.poison.Peek(ctx, storage.MaxDequeue)
	if err != nil {
		return fmt.Errorf("peeking at the poison queue: %w", err)
	}
	for _, m := range msgs {
		var pr poisonRecord
		if err := json.Unmarshal([]byte(m.Text), &pr); err != nil {
			a.errorf("poison queue: message %q", message.Clip(m.Text))
			continue
		}
		a.errorf("poison queue: message %q: %s", message.Clip(pr.Text), pr.Reason)
	}
	if rest := n - len(msgs); rest > 0 {
		a.errorf("poison queue: %d more messages", rest)
	}
	return nil
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/board"
	"github.com/reversi-cloud/reversi/dedup"
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
	Work     int  // approximate length of the work queue
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

func (a *Audit) errorf(format string, args ...any) {
	a.Findings = append(a.Findings, Finding{Text: fmt.Sprintf(format, args...)})
}

func (a *Audit) warnf(format string, args ...any) {
	a.Findings = append(a.Findings, Finding{Warning: true, Text: fmt.Sprintf(format, args...)})
}

// auditState is what the tables say at one moment: every ply record and,
// per ply, its run records.
type auditState struct {
	plies   map[int]*plyRecord
	records map[int][]*rangeRecord
	markers map[int][]storage.Entity // resolve markers of complete plies
}

func (r *Run) readAuditState(ctx context.Context) (*auditState, error) {
	es, err := queryAll(ctx, r.state, pkPlies, "", "")
	if err != nil {
		return nil, fmt.Errorf("reading ply records: %w", err)
	}
	s := &auditState{plies: map[int]*plyRecord{}, records: map[int][]*rangeRecord{}, markers: map[int][]storage.Entity{}}
	for _, e := range es {
		p, err := r.decodePly(e)
		if err != nil {
			return nil, err
		}
		s.plies[p.Ply] = p
		if s.records[p.Ply], err = r.listRecords(ctx, p.Ply); err != nil {
			return nil, fmt.Errorf("reading records of ply %d: %w", p.Ply, err)
		}
		if p.State == plyComplete {
			if s.markers[p.Ply], err = queryAll(ctx, r.state, pkResolve(p.Ply), "d", "e"); err != nil {
				return nil, fmt.Errorf("reading resolve markers of ply %d: %w", p.Ply, err)
			}
		}
	}
	return s, nil
}

// live reports whether a blob is reachable from the tables: a final blob
// or results blob of a complete ply, or a blob a run record of an open ply
// names.
func (s *auditState) live(ply int, name string) bool {
	p, ok := s.plies[ply]
	if !ok {
		return false
	}
	if p.State == plyComplete {
		if slices.Contains(p.Blobs, name) {
			return true
		}
		j, ok := resultIndex(name)
		return ok && j < len(p.Blobs)
	}
	for _, rr := range s.records[ply] {
		if rr.Blob == name {
			return true
		}
	}
	return false
}

// blobPly is the ply a blob belongs to, from its folder pNN/.
func blobPly(name string) (int, bool) {
	if len(name) < 5 || name[0] != 'p' || name[3] != '/' {
		return 0, false
	}
	n, err := strconv.Atoi(name[1:3])
	return n, err == nil && name[1] >= '0' && name[1] <= '9'
}

// resultIndex is j for a results blob pNN/r-<j>.
func resultIndex(name string) (int, bool) {
	if !isResultBlob(name) {
		return 0, false
	}
	j, err := strconv.Atoi(name[6:])
	return j, err == nil && j >= 0
}

// Audit checks a run's storage for damage: blobs no record refers to
// (unless a pending compensation message may still delete them), records
// whose blob is missing or short, final blobs of the wrong size or without
// backtracking rows, overlapping or non-final runs in a complete ply,
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
	if a.Work, err = r.work.ApproximateLength(ctx); err != nil {
		return nil, fmt.Errorf("reading the work queue length: %w", err)
	}
	visible, err := r.work.Peek(ctx, storage.MaxDequeue)
	if err != nil {
		return nil, fmt.Errorf("peeking at the work queue: %w", err)
	}
	after, err := r.readAuditState(ctx)
	if err != nil {
		return nil, err
	}
	a.Plies = len(after.plies)
	for _, rs := range after.records {
		a.Records += len(rs)
	}

	for _, ply := range sortedPlies(before.plies) {
		p := before.plies[ply]
		if q, ok := after.plies[ply]; !ok || q.ETag != p.ETag {
			continue // the ply moved on while we listed; its blobs are checked on the next audit
		}
		if err := r.auditPly(ctx, a, p, before.records[ply], before.markers[ply], sizes); err != nil {
			return nil, err
		}
	}

	r.auditOrphans(a, after, list, visible)
	auditQueues(a, visible)
	if err := r.auditPoison(ctx, a); err != nil {
		return nil, err
	}
	if !a.Complete && a.Work == 0 {
		if d, err := r.Done(ctx); err == nil && d == nil {
			a.errorf("the run is not complete but its work queue is empty: nothing is left to make progress")
		}
	}
	return a, nil
}

func sortedPlies(m map[int]*plyRecord) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// auditPly checks one ply's records against the blobs.
func (r *Run) auditPly(ctx context.Context, a *Audit, p *plyRecord, recs []*rangeRecord, markers []storage.Entity, sizes map[string]int64) error {
	finals := map[string]bool{}
	if p.State == plyComplete {
		for _, b := range p.Blobs {
			finals[b] = true
		}
	}
	for _, rr := range recs {
		if finals[rr.Blob] {
			continue // checked below as a final blob
		}
		size, ok := sizes[rr.Blob]
		switch {
		case !ok && rr.Len > 0:
			a.errorf("ply %d: record %s names blob %s, which is missing", p.Ply, rr.ID, rr.Blob)
		case rr.Off+rr.Len > size:
			a.errorf("ply %d: record %s names bytes %d to %d of blob %s, which holds %d", p.Ply, rr.ID, rr.Off, rr.Off+rr.Len, rr.Blob, size)
		}
	}
	if p.State != plyComplete {
		return nil
	}
	for j, blob := range p.Blobs {
		size, ok := sizes[blob]
		switch {
		case !ok:
			a.errorf("ply %d: final blob %d (%s) is missing", p.Ply, j, blob)
		case size != p.Counts[j]*board.KeyLen:
			a.errorf("ply %d: final blob %d (%s) holds %d bytes, not %d positions of %d bytes", p.Ply, j, blob, size, p.Counts[j], board.KeyLen)
		}
		if p.Ply == 0 || !ok {
			continue
		}
		page, err := r.back.Query(ctx, backPartition(blob), storage.QueryOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("reading backtracking rows of %s: %w", blob, err)
		}
		if len(page.Entities) == 0 && page.Next == "" {
			a.errorf("ply %d: final blob %d (%s) has no backtracking rows", p.Ply, j, blob)
		}
	}
	named := map[string]bool{}
	for _, rr := range recs {
		named[rr.Blob] = true
		switch {
		case !rr.Final:
			a.errorf("ply %d is complete but record %s (blob %s) is not final", p.Ply, rr.ID, rr.Blob)
		case !finals[rr.Blob]:
			a.errorf("ply %d is complete but record %s names blob %s, which is not one of its final blobs", p.Ply, rr.ID, rr.Blob)
		}
	}
	if p.Ply > 0 {
		for j, b := range p.Blobs {
			if !named[b] {
				a.errorf("ply %d: final blob %d (%s) has no record", p.Ply, j, b)
			}
		}
	}
	auditOverlaps(a, p.Ply, recs)
	for _, e := range markers {
		j, err := strconv.Atoi(e.RowKey[1:])
		if err != nil || j >= len(p.Blobs) {
			a.errorf("ply %d: resolve marker %s names no final blob", p.Ply, e.RowKey)
			continue
		}
		name := resultBlob(p.Ply, j)
		if size, ok := sizes[name]; !ok {
			a.errorf("ply %d: final blob %d is resolved but its results blob %s is missing", p.Ply, j, name)
		} else if size != backtrack.ResultLen*p.Counts[j] {
			a.errorf("ply %d: results blob %s holds %d bytes, not %d results of %d bytes", p.Ply, name, size, p.Counts[j], backtrack.ResultLen)
		}
	}
	return nil
}

// auditOverlaps reports every pair of overlapping runs of a complete ply
// that a sweep in order of Min meets: each run against the run seen so far
// that reaches furthest.
func auditOverlaps(a *Audit, ply int, recs []*rangeRecord) {
	ds := toDedup(recs)
	slices.SortFunc(ds, func(x, y dedup.Record) int {
		if c := board.Compare(x.Min, y.Min); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	if len(ds) == 0 {
		return
	}
	reach := ds[0] // the run seen so far that reaches furthest
	for i := 1; i < len(ds); i++ {
		if dedup.Overlaps(reach, ds[i]) {
			a.errorf("ply %d is complete but records %s [%s, %s] and %s [%s, %s] overlap", ply,
				reach.ID, reach.Min.Text(), reach.Max.Text(), ds[i].ID, ds[i].Min.Text(), ds[i].Max.Text())
		}
		if board.Compare(ds[i].Max, reach.Max) > 0 {
			reach = ds[i]
		}
	}
}

// auditOrphans reports blobs nothing refers to. A blob that a visible
// compensation message names is covered. Otherwise it is an error when no
// compensation message can be pending: the work queue is empty, or every
// message in it was seen.
func (r *Run) auditOrphans(a *Audit, s *auditState, list []storage.BlobInfo, visible []storage.Message) {
	covered := map[string]bool{}
	for _, m := range visible {
		if msg, err := ParseMessage(r.Board, m.Text); err == nil && msg.Kind == KindCompensation {
			covered[msg.Blob] = true
		}
	}
	// While the run is in progress, a task in flight may be between
	// writing a blob and naming it, and its compensation message is
	// invisible: only an empty queue rules that out.
	sawAll := a.Work == 0 || a.Complete && a.Work <= len(visible)
	for _, b := range list {
		ply, ok := blobPly(b.Name)
		if ok && s.live(ply, b.Name) || covered[b.Name] {
			continue
		}
		if p := s.plies[ply]; ok && p != nil && p.State != plyComplete {
			continue // an open ply's spent runs stay until its completion sweeps the folder
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
		a.errorf("work queue: message %q left in a complete run (dequeued %d times)", clip(m.Text), m.DequeueCount)
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
			a.errorf("poison queue: message %q", clip(m.Text))
			continue
		}
		a.errorf("poison queue: message %q: %s", clip(pr.Text), pr.Reason)
	}
	if rest := n - len(msgs); rest > 0 {
		a.errorf("poison queue: %d more messages", rest)
	}
	return nil
}

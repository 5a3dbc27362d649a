// Package report is the per-ply summary every engine produces, as a
// readable table and as JSON with stable field names.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/reversi-cloud/reversi/storage"
)

// Ply is one row of the report.
type Ply struct {
	Ply       int   `json:"ply"`
	Positions int64 `json:"positions"`
	Terminal  int64 `json:"terminal"`
	Edges     int64 `json:"edges"`
	BlackWins int64 `json:"black_wins"`
	WhiteWins int64 `json:"white_wins"`
	Draws     int64 `json:"draws"`
	Unknown   int64 `json:"unknown"`
	// Pipeline-only figures; zero for the reference engine.
	Blobs      int64 `json:"blobs,omitempty"`
	Merges     int64 `json:"merges,omitempty"`
	Combines   int64 `json:"combines,omitempty"` // combine tasks, in a ply with a combine level
	BlobReads  int64 `json:"blob_reads,omitempty"`
	MergedKeys int64 `json:"merged_keys,omitempty"`
	// The storage transactions made for the ply (its messages' handling)
	// and their cost, for pipeline runs: see Cost.Plies.
	Transactions int64   `json:"transactions,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	// What handling the ply's messages cost, over every process of a
	// pipeline run (storage.PlyStat, with SetHandlings): FinalBlobs is
	// Blobs, named as these figures are read, per final blob; Tasks the
	// messages handled; EntityReads the table entities read; the MaxTask
	// fields the most one handling cost.
	FinalBlobs          int64   `json:"final_blobs,omitempty"`
	Tasks               int64   `json:"tasks,omitempty"`
	EntityReads         int64   `json:"entity_reads,omitempty"`
	MaxTaskTransactions int64   `json:"max_task_transactions,omitempty"`
	MaxTaskEntities     int64   `json:"max_task_entities,omitempty"`
	MaxTaskSeconds      float64 `json:"max_task_seconds,omitempty"`
	// ByKind splits the handlings by the kind of message handled: their
	// number, transactions and entities read, and the most one cost.
	ByKind map[string]storage.KindStat `json:"by_kind,omitempty"`
}

// Report is the summary of one enumeration.
type Report struct {
	Board               int    `json:"board"`
	TargetPly           int    `json:"target_ply"`
	Complete            bool   `json:"complete"`
	Root                string `json:"root"`
	Engine              string `json:"engine,omitempty"`
	Run                 string `json:"run,omitempty"`
	StorageTransactions int64  `json:"storage_transactions"`
	// Transactions by category (enumeration, dedup, backtrack,
	// compensation, control; "other" for unlabelled calls).
	TransactionsByCategory map[string]int64 `json:"transactions_by_category,omitempty"`
	// The same, divided by the edges of every ply.
	TransactionsPerEdge           float64            `json:"transactions_per_edge,omitempty"`
	TransactionsPerEdgeByCategory map[string]float64 `json:"transactions_per_edge_by_category,omitempty"`
	// Transactions by service (blob, queue, table).
	TransactionsByService map[string]int64 `json:"transactions_by_service,omitempty"`
	// Cost is the estimated storage bill, for pipeline runs.
	Cost *Cost `json:"cost,omitempty"`
	// Start is the start position's key when the run did not start from
	// the board's usual start; Solve says the target ply was solved.
	Start string `json:"start,omitempty"`
	Solve bool   `json:"solve,omitempty"`
	// SolveMode is how far the target ply was solved (all, root, wld);
	// Frontier counts what a pruned mode (root, wld) did with its
	// positions once it is resolved.
	SolveMode string    `json:"solve_mode,omitempty"`
	Frontier  *Frontier `json:"frontier,omitempty"`
	// Perfect-play final score, set when the whole game was enumerated.
	Score *Score `json:"score,omitempty"`
	// RootScore is the start position's score under perfect play: black's
	// discs minus white's, empty squares to the winner (the WOF rule).
	// Set when known: the whole game enumerated, or the target ply solved.
	RootScore   *int    `json:"root_score,omitempty"`
	WallSeconds float64 `json:"wall_seconds,omitempty"`
	Plies       []Ply   `json:"plies"`
	// Audit is what the checks of inspect -check found at the end of the
	// run, for the runs that audit themselves (enumerate -storage sim).
	Audit *Audit `json:"audit,omitempty"`
}

// Audit is what a run's audit found.
type Audit struct {
	// Problems are the errors found, empty (not null) when the run is
	// clean.
	Problems []string `json:"problems"`
	// Warnings may be work still under way, such as a blob that a pending
	// compensation message may yet delete; they do not make the run fail.
	Warnings []string `json:"warnings,omitempty"`
	// Summary is the audit's one line: what it looked at.
	Summary string `json:"summary"`
}

// Frontier counts the positions of a target ply solved in a pruned solve
// mode by what the solving did with each.
type Frontier struct {
	Solved  int64 `json:"solved"`  // an exact score
	Bounded int64 `json:"bounded"` // bounds that settled what their parents needed
	Skipped int64 `json:"skipped"` // not searched: their parents were settled without them
	Over    int64 `json:"over"`    // the game is over: nothing to solve
}

// Score is a final disc count with perfect play.
type Score struct {
	Black int `json:"black"`
	White int `json:"white"`
}

// Edges sums edges over all plies.
func (r *Report) Edges() int64 {
	var n int64
	for _, p := range r.Plies {
		n += p.Edges
	}
	return n
}

// SetTransactions records a run's storage transactions by category, their
// total, and both divided by the run's edges (left zero without edges).
func (r *Report) SetTransactions(byCategory map[string]int64) {
	r.StorageTransactions = 0
	r.TransactionsByCategory = byCategory
	r.TransactionsPerEdgeByCategory = nil
	for _, n := range byCategory {
		r.StorageTransactions += n
	}
	edges := r.Edges()
	if edges == 0 {
		r.TransactionsPerEdge = 0
		return
	}
	r.TransactionsPerEdge = float64(r.StorageTransactions) / float64(edges)
	r.TransactionsPerEdgeByCategory = make(map[string]float64, len(byCategory))
	for c, n := range byCategory {
		r.TransactionsPerEdgeByCategory[c] = float64(n) / float64(edges)
	}
}

// SetCost records the run's estimated cost, its transactions by
// service, and each ply's transactions and cost in the ply's row.
func (r *Report) SetCost(c *Cost) {
	r.Cost = c
	r.TransactionsByService = c.ByService()
	byPly := map[int]PlyCost{}
	for _, p := range c.Plies {
		byPly[p.Ply] = p
	}
	for i := range r.Plies {
		p := byPly[r.Plies[i].Ply]
		r.Plies[i].Transactions, r.Plies[i].CostUSD = p.Transactions, p.USD
	}
}

// SetHandlings records in each ply's row what handling its messages
// cost, from plies, the per-ply statistics of every process together
// (storage.Stats.Add).
func (r *Report) SetHandlings(plies []storage.PlyStat) {
	byPly := map[int]storage.PlyStat{}
	for _, p := range plies {
		byPly[p.Ply] = p
	}
	for i := range r.Plies {
		row, p := &r.Plies[i], byPly[r.Plies[i].Ply]
		row.FinalBlobs = row.Blobs
		row.Tasks, row.EntityReads = p.Tasks, p.EntityReads
		row.MaxTaskTransactions, row.MaxTaskEntities, row.MaxTaskSeconds = p.MaxTaskTransactions, p.MaxTaskEntities, p.MaxTaskSeconds
		row.ByKind = p.ByKind
	}
}

// WriteTable prints the report as an aligned table.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ply\tpositions\tterminal\tedges\tblack\twhite\tdraw\tunknown\t\n")
	for _, p := range r.Plies {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Ply, p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws, p.Unknown)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	status := "complete"
	if !r.Complete {
		status = "incomplete"
	}
	fmt.Fprintf(w, "board %dx%d, target ply %d, %s, root: %s", r.Board, r.Board, r.TargetPly, status, r.Root)
	if r.Score != nil {
		fmt.Fprintf(w, ", perfect play %d-%d (black-white)", r.Score.Black, r.Score.White)
	}
	if r.RootScore != nil {
		fmt.Fprintf(w, ", root score %+d", *r.RootScore)
	}
	if f := r.Frontier; f != nil {
		fmt.Fprintf(w, ", solve mode %s: ply %d %d solved, %d bounded, %d skipped, %d over", r.SolveMode, r.TargetPly, f.Solved, f.Bounded, f.Skipped, f.Over)
	}
	fmt.Fprintf(w, ", storage transactions: %d", r.StorageTransactions)
	if r.TransactionsPerEdge > 0 {
		// Three significant digits: a deep run's figures are 1e-5.
		fmt.Fprintf(w, " (%.3g per edge", r.TransactionsPerEdge)
		cats := make([]string, 0, len(r.TransactionsPerEdgeByCategory))
		for c := range r.TransactionsPerEdgeByCategory {
			cats = append(cats, c)
		}
		sort.Strings(cats)
		for _, c := range cats {
			fmt.Fprintf(w, "; %s %.3g", c, r.TransactionsPerEdgeByCategory[c])
		}
		fmt.Fprint(w, ")")
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	if a := r.Audit; a != nil {
		fmt.Fprintf(w, "audit at the end of the run: %s\n", a.Summary)
		for _, p := range a.Problems {
			fmt.Fprintf(w, "  problem: %s\n", p)
		}
	}
	if r.Cost != nil {
		if err := r.Cost.WriteTable(w); err != nil {
			return err
		}
	}
	return r.writeHandlings(w)
}

// writeHandlings prints what handling each ply's messages cost, when
// the report has the figures.
func (r *Report) writeHandlings(w io.Writer) error {
	if !slices.ContainsFunc(r.Plies, func(p Ply) bool { return p.Tasks > 0 }) {
		return nil
	}
	fmt.Fprintln(w, "\nwhat handling each ply's messages cost (the most of one handling: transactions, entities read, seconds):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "ply	final blobs	tasks	entities read	max transactions	max entities	max seconds	\n")
	for _, p := range r.Plies {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t\n", p.Ply, p.FinalBlobs, p.Tasks, p.EntityReads, p.MaxTaskTransactions, p.MaxTaskEntities, p.MaxTaskSeconds)
	}
	return tw.Flush()
}

// WriteJSONFile writes the report as indented JSON.
func (r *Report) WriteJSONFile(path string) error { return WriteJSONFile(path, "report", r) }

// WriteJSONFile writes v as indented JSON to path; what names it in
// errors.
func WriteJSONFile(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

// Diff describes the first differences between two reports' per-ply
// counts and results (positions, terminal, edges, black, white, draw,
// unknown) and roots, or returns "" when they agree.
func Diff(want, got *Report) string { return diff(want, got, true) }

// DiffCounts is Diff for an engine that counts forward only and decides
// no results: it compares each ply's positions, terminal positions and
// edges, not the results or the root.
func DiffCounts(want, got *Report) string { return diff(want, got, false) }

func diff(want, got *Report, results bool) string {
	if len(want.Plies) != len(got.Plies) {
		return fmt.Sprintf("%d plies, want %d", len(got.Plies), len(want.Plies))
	}
	if results && want.Root != got.Root {
		return fmt.Sprintf("root %s, want %s", got.Root, want.Root)
	}
	for i := range want.Plies {
		wk, gk := want.Plies[i].compared(results), got.Plies[i].compared(results)
		if !slices.Equal(wk, gk) {
			return fmt.Sprintf("ply %d: %s %v, want %v", i, strings.Join(comparedNames[:len(wk)], "/"), gk, wk)
		}
	}
	return ""
}

// comparedNames names the values of Ply.compared, in order.
var comparedNames = [...]string{"positions", "terminal", "edges", "black", "white", "draw", "unknown"}

// compared is what diff compares of a ply: the counts, then the results
// when they are compared too.
func (p Ply) compared(results bool) []int64 {
	k := []int64{p.Positions, p.Terminal, p.Edges, p.BlackWins, p.WhiteWins, p.Draws, p.Unknown}
	if !results {
		return k[:3]
	}
	return k
}

// Positions sums positions over all plies.
func (r *Report) Positions() int64 {
	var n int64
	for _, p := range r.Plies {
		n += p.Positions
	}
	return n
}

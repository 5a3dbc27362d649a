package browse

import "time"

// Progress is the JSON of /api/progress. Counts are this process's since
// Started; rates divide them by the time elapsed until now, or until
// the loops finished.
type Progress struct {
	Live     bool `json:"live"`     // worker loops run in this process
	Finished bool `json:"finished"` // and have stopped
	// Current is what the latest task was doing, e.g. "expanding ply 7";
	// Ply is its ply, -1 before the first task.
	Current            string  `json:"current,omitempty"`
	Ply                int     `json:"ply"`
	Tasks              int64   `json:"tasks"`
	Positions          int64   `json:"positions"` // positions expanded
	Edges              int64   `json:"edges"`
	Merges             int64   `json:"merges"`
	Poisoned           int64   `json:"poisoned"`
	ElapsedSeconds     float64 `json:"elapsed_seconds"`
	PositionsPerSecond float64 `json:"positions_per_second"`
	EdgesPerSecond     float64 `json:"edges_per_second"`
	// Step is the step under way as the run's records last said, for
	// example "ply 14: 31/79 bucket merges", with its items done out
	// of the total, and StepETASeconds the time it should take yet at
	// the rate seen so far (0 when not known).
	Step           string  `json:"step,omitempty"`
	StepDone       int     `json:"step_done"`
	StepTotal      int     `json:"step_total"`
	StepETASeconds float64 `json:"step_eta_seconds"`
	// PollMillis and ReportPolls tell the page how often to poll.
	PollMillis  int64 `json:"poll_ms"`
	ReportPolls int   `json:"report_polls"`
}

func (s *Server) snapshot(now time.Time) Progress {
	out := Progress{Ply: -1, PollMillis: s.cfg.Poll.Milliseconds(), ReportPolls: ReportPolls}
	p := s.cfg.Progress
	if p == nil {
		return out
	}
	out.Live = true
	if at := s.finishedAt.Load(); at != 0 {
		out.Finished, now = true, time.Unix(0, at)
	}
	out.Current = p.Current()
	if ply, ok := p.Ply(); ok {
		out.Ply = ply
	}
	out.Tasks, out.Positions, out.Edges = p.Tasks.Load(), p.Positions.Load(), p.Edges.Load()
	out.Merges, out.Poisoned = p.Merges.Load(), p.Poisoned.Load()
	if st, ok := p.Step(); ok {
		out.Step, out.StepDone, out.StepTotal = st.String(), st.Done, st.Total
		if left, ok := p.ETA(); ok {
			out.StepETASeconds = left.Seconds()
		}
	}
	out.ElapsedSeconds = now.Sub(s.cfg.Started).Seconds()
	if out.ElapsedSeconds > 0 {
		out.PositionsPerSecond = float64(out.Positions) / out.ElapsedSeconds
		out.EdgesPerSecond = float64(out.Edges) / out.ElapsedSeconds
	}
	return out
}

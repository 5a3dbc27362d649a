package task

import (
	"testing"
	"time"
)

// TestStepETA: the time left in a step is measured from the first
// reading of that step, and starts again with each new step; a reading
// that counts fewer done than the one before (an estimate, as a stage's
// progress is when its items are done out of order) keeps the count.
func TestStepETA(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p := &Progress{}
	if _, ok := p.ETA(); ok {
		t.Fatal("an ETA before any reading")
	}
	for _, tc := range []struct {
		step Step
		want time.Duration // 0: none yet
		text string
	}{
		{Step{Ply: 14, Name: "expanding", Done: 100, Total: 1100, At: t0}, 0, "ply 14: 100/1100 expansion tasks"},
		{Step{Ply: 14, Name: "expanding", Done: 100, Total: 1100, At: t0.Add(time.Minute)}, 0, "ply 14: 100/1100 expansion tasks"},
		{Step{Ply: 14, Name: "expanding", Done: 200, Total: 1100, At: t0.Add(2 * time.Minute)}, 18 * time.Minute, "ply 14: 200/1100 expansion tasks"},
		{Step{Ply: 14, Name: "combining", Done: 0, Total: 84, At: t0.Add(3 * time.Minute)}, 0, "ply 14: 0/84 combine tasks"},
		{Step{Ply: 14, Name: "combining", Done: 21, Total: 84, At: t0.Add(4 * time.Minute)}, 3 * time.Minute, "ply 14: 21/84 combine tasks"},
		{Step{Ply: 14, Name: "combining", Done: 10, Total: 84, At: t0.Add(5 * time.Minute)}, 6 * time.Minute, "ply 14: 21/84 combine tasks"},
		{Step{Ply: 14, Name: "combining", Done: 42, Total: 84, At: t0.Add(6 * time.Minute)}, 3 * time.Minute, "ply 14: 42/84 combine tasks"},
		{Step{Ply: 13, Name: "resolving", Done: 1, Total: 3, At: t0.Add(6 * time.Minute)}, 0, "ply 13: 1/3 final blobs resolved"},
	} {
		p.SetStep(tc.step)
		got, ok := p.ETA()
		if ok != (tc.want != 0) || got != tc.want {
			t.Errorf("after %v: ETA %v (%v), want %v", tc.step, got, ok, tc.want)
		}
		if s, _ := p.Step(); s.String() != tc.text {
			t.Errorf("step reads %q, want %q", s.String(), tc.text)
		}
	}
}

// TestStepString: a step reads as its items done out of its total, and
// a combine level of several says which.
func TestStepString(t *testing.T) {
	for _, c := range []struct {
		s    Step
		want string
	}{
		{Step{Ply: 14, Name: "merging", Done: 31, Total: 79}, "ply 14: 31/79 bucket merges"},
		{Step{Ply: 14, Name: "combining", Done: 3, Total: 672}, "ply 14: 3/672 combine tasks"},
		{Step{Ply: 10, Name: "combining (level 2 of 2)", Done: 5, Total: 3472}, "ply 10: 5/3472 combine tasks (level 2 of 2)"},
		{Step{Ply: 9, Name: "resolving", Done: 0, Total: 27324}, "ply 9: 0/27324 final blobs resolved"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v reads %q, want %q", c.s, got, c.want)
		}
	}
}

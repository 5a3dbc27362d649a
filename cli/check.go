package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/reversi-cloud/reversi/pipeline"
)

// checkFailed is a check that found damage: its findings are printed
// already, so the error line only sums them up.
type checkFailed struct{ summary string }

func (e checkFailed) Error() string { return e.summary }

// check audits a run for inspect -check: one line per finding on stdout,
// then the summary line. It fails (exit 1) if any finding is an error;
// warnings, such as a blob a pending compensation may still delete, do not.
func check(ctx context.Context, w io.Writer, r *pipeline.Run) error {
	a, err := r.Audit(ctx)
	if err != nil {
		return fmt.Errorf("auditing run %s: %w", r.Config.Name, err)
	}
	for _, f := range a.Findings {
		fmt.Fprintln(w, f)
	}
	fmt.Fprintln(w, a.Summary())
	if a.Failed() {
		return checkFailed{"the check found problems in run " + r.Config.Name}
	}
	return nil
}

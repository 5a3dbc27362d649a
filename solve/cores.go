package solve

import "context"

// Cores counts the CPUs that no solve is using, for the helper threads of
// the Solvers that share it (Options.Cores). A batch keeps every CPU busy
// with a position of its own while positions are left; at its end the
// CPUs that run out of positions would idle while the last hard positions
// finish. Given back to Cores, they join those positions as helpers
// instead: the last position of FFO #40 to #49 is then searched by two
// threads for its last seconds.
//
// A helper takes a free CPU before it starts on a position and gives it
// back when that solve ends, so the threads searching never outnumber the
// CPUs the Solvers' owner counted.
type Cores struct{ free chan struct{} }

// NewCores returns a count of at most max idle CPUs, none idle yet.
func NewCores(max int) *Cores {
	return &Cores{free: make(chan struct{}, max)}
}

// Free makes one more CPU idle, for good: its owner has no more positions
// for it. Beyond the max of NewCores it does nothing.
func (c *Cores) Free() {
	select {
	case c.free <- struct{}{}:
	default:
	}
}

// take waits for an idle CPU and reports whether it got one before ctx or
// done ended the wait.
func (c *Cores) take(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-c.free:
		return true
	case <-done:
	case <-ctx.Done():
	}
	return false
}

package pipeline

import "time"

// Outcomes of a handled message, as reported to an Observer.
const (
	OutcomeOK        = "ok"         // handled; the message was deleted
	OutcomeFailed    = "failed"     // the task failed; the message will be retried
	OutcomePoison    = "poison"     // moved to the poison queue
	OutcomeLeaseLost = "lease_lost" // another delivery took the message over; the task was abandoned
	OutcomeCancelled = "cancelled"  // the worker is stopping; the message reappears after its timeout
	OutcomeThrottled = "throttled"  // storage refused the task for load through every retry; the message will be retried
)

// Observer is told about every message a worker loop handles, for
// metrics. It is called from each worker loop's goroutine, so it must be
// safe for concurrent use, and it should return quickly. Kind is the
// message kind as in logs (inline, chunk, scan, merge, resolve,
// compensation, or unknown/empty for unparseable text).
type Observer interface {
	TaskDone(kind, outcome string, d time.Duration)
}

// plyOf reads the ply from a message's text (its two digits after the
// kind), so that even a message that fails to parse is logged with one;
// -1 when the text has none.
func plyOf(text string) int {
	if len(text) < 3 || text[1] < '0' || text[1] > '9' || text[2] < '0' || text[2] > '9' {
		return -1
	}
	return int(text[1]-'0')*10 + int(text[2]-'0')
}

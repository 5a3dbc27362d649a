package pipeline

import (
	"context"

	"github.com/reversi-cloud/reversi/backtrack"
	"github.com/reversi-cloud/reversi/compensation"
	"github.com/reversi-cloud/reversi/dedup"
	"github.com/reversi-cloud/reversi/expand"
	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/task"
)

// handlers routes each message kind to the handler of its concept.
var handlers = map[message.Kind]task.Handler{
	message.KindInline:       expand.Handler,
	message.KindChunk:        expand.Handler,
	message.KindScan:         dedup.ScanHandler,
	message.KindCombine:      dedup.CombineHandler,
	message.KindMerge:        dedup.MergeHandler,
	message.KindResolve:      backtrack.ResolveHandler,
	message.KindCompensation: compensation.Handler,
	message.KindDispatch:     fanOutHandler,
	message.KindBack:         fanOutHandler,
}

// fanOutHandler hands the flow's own messages to it (dispatch.go).
var fanOutHandler task.Handler = task.HandlerFunc(func(ctx context.Context, t *task.Task, m message.Message) error {
	return t.Flow.FanOut(ctx, t, m)
})

// route hands a message to the handler of its kind.
func route(ctx context.Context, t *task.Task, m message.Message) error {
	h, ok := handlers[m.Kind]
	if !ok {
		return message.Badf("no handler for kind %q", m.Kind)
	}
	return h.Handle(ctx, t, m)
}

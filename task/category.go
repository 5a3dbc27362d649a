package task

import (
	"context"

	"github.com/reversi-cloud/reversi/message"
	"github.com/reversi-cloud/reversi/storage"
)

// Storage-transaction categories, set with storage.WithCategory so that a
// run's cost can be split by what it paid for.
const (
	// CategoryEnumeration is expanding positions: reading a ply's keys,
	// writing sorted entries blobs and their range records.
	CategoryEnumeration = "enumeration"
	// CategoryDedup is removing duplicates: scans and merges.
	CategoryDedup = "dedup"
	// CategoryBacktrack is backtracking rows, notices and result blobs:
	// everything that propagates results back to the start.
	CategoryBacktrack = "backtrack"
	// CategoryCompensation is handling compensation messages.
	CategoryCompensation = "compensation"
	// CategoryControl is the rest: polling the queue, poisoning messages,
	// seeding and recording statistics.
	CategoryControl = "control"
)

// Categories lists every category in report order.
var Categories = []string{CategoryEnumeration, CategoryDedup, CategoryBacktrack, CategoryCompensation, CategoryControl}

// CategoryOf is the category of the work a message kind starts.
func CategoryOf(k message.Kind) string {
	switch k {
	case message.KindInline, message.KindChunk:
		return CategoryEnumeration
	case message.KindScan, message.KindCombine, message.KindMerge, message.KindDispatch:
		return CategoryDedup
	case message.KindResolve, message.KindBack:
		return CategoryBacktrack
	case message.KindCompensation:
		return CategoryCompensation
	}
	return CategoryControl
}

// WithCategory bills the storage calls made with ctx to category c.
func WithCategory(ctx context.Context, c string) context.Context {
	return storage.WithCategory(ctx, c)
}

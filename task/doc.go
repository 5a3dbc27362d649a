// Package task is what a message handler works with: the run it belongs
// to (settings, rows, blobs, queue), the delivery it handles, and the
// flow between plies it reports to. Handlers live in the package of their
// concept (expand, dedup, backtrack, compensation); package pipeline
// routes each message kind to its handler and runs the worker loops.
// The handlers of a stage's items (expansion, combine, merge, resolve)
// follow one idempotent sequence, which Do carries (item.go).
package task

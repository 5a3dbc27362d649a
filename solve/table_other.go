//go:build !linux

package solve

// allocBuckets returns n zeroed buckets for t from the Go heap.
func allocBuckets(t *table, n int) []bucket { return make([]bucket, n) }

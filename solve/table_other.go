//go:build !linux

package solve

// allocBuckets returns n zeroed buckets from the Go heap, and no function
// to release them: the collector does.
func allocBuckets(n int) ([]bucket, func()) { return make([]bucket, n), nil }

//go:build !amd64

package solve

// prefetch does nothing off amd64: the probe that follows loads the
// bucket itself.
func prefetch(b *bucket) {}

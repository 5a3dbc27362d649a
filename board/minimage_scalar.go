//go:build !(goexperiment.simd && amd64.v3)

package board

// minImage returns the smallest of the eight masks a[i]|b[i], compared
// as unsigned, and which i reach it (bit i of ties).
func minImage(a, b *[8]uint64) (best uint64, ties uint) {
	return minImageScalar(a, b)
}

//go:build !amd64 || purego

package dedup

// climb is climbGeneric where there is no assembly for it.
func climb(tree []int, pre []prefix, w int, c prefix, n uint) (int, prefix, uint) {
	return climbGeneric(tree, pre, w, c, n)
}

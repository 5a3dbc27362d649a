//go:build amd64 && !purego

package dedup

// climb is climbGeneric in assembly. In Go a match is five steps on the
// chain that climbs the tree: the two words subtracted, the borrow made
// a mask, and the mask's and and xor into the climbing prefix. Here the
// borrow of the subtraction's second word moves the winner and its
// prefix by conditional moves at once: three steps (BenchmarkReplay,
// docs/performance.md).
//
//go:noescape
func climb(tree []int, pre []prefix, w int, c prefix, n uint) (wOut int, cOut prefix, stop uint)

package solve

// prefetch asks the CPU to bring the cache line at b into its caches and
// returns at once (PREFETCHT0). Go has no prefetch intrinsic, and a plain
// load is no substitute: the CPU cannot retire the instructions after a
// load that misses until its data arrives, so ordering stalls on each
// child's bucket in turn (tried: 20% more CPU on FFO #40 to #49, against 8%
// less with the prefetch).
//
//go:noescape
func prefetch(b *bucket)

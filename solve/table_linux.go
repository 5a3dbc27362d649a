package solve

import (
	"runtime"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and most
// arm64 kernels.
const hugePage = 2 << 20

// allocBuckets returns n zeroed buckets for t. A table of a huge page or
// more is mapped outside the Go heap, aligned to a huge page and marked
// for transparent huge pages: the table is probed at random, so with 4 KiB
// pages nearly every probe of a large table also misses the TLB (FFO #40
// to #49 took 9% less CPU with a 256 MiB table). The mapping is released
// when t is collected. Where the kernel refuses, the Go heap serves.
func allocBuckets(t *table, n int) []bucket {
	size := n * bucketBytes
	if size < hugePage {
		return make([]bucket, n)
	}
	mem, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]bucket, n)
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	skip := int(-start & (hugePage - 1))
	aligned := mem[skip : skip+size]
	// Only a hint: a kernel without transparent huge pages (or with them
	// off) maps 4 KiB pages, and the table works as well, only slower.
	_ = syscall.Madvise(aligned, syscall.MADV_HUGEPAGE)
	runtime.AddCleanup(t, func(mem []byte) { _ = syscall.Munmap(mem) }, mem)
	// The buckets hold no pointers, so memory the collector does not know
	// is safe for them.
	return unsafe.Slice((*bucket)(unsafe.Pointer(unsafe.SliceData(aligned))), n)
}

package solve

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and most
// arm64 kernels.
const hugePage = 2 << 20

// allocBuckets returns n zeroed buckets, and a function that releases
// them if they are not Go memory (nil if they are). A table of a huge page
// or more is mapped outside the Go heap, aligned to a huge page and marked
// for transparent huge pages: the table is probed at random, so with 4 KiB
// pages nearly every probe of a large table also misses the TLB (FFO #40
// to #49 took 9% less CPU with a 256 MiB table). Where the kernel refuses,
// the Go heap serves.
func allocBuckets(n int) ([]bucket, func()) {
	size := n * bucketBytes
	if size < hugePage {
		return make([]bucket, n), nil
	}
	mem, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]bucket, n), nil
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	skip := int(-start & (hugePage - 1))
	aligned := mem[skip : skip+size]
	// Only a hint: a kernel without transparent huge pages (or with them
	// off) maps 4 KiB pages, and the table works as well, only slower.
	_ = syscall.Madvise(aligned, syscall.MADV_HUGEPAGE)
	// The buckets hold no pointers, so memory the collector does not know
	// is safe for them.
	return unsafe.Slice((*bucket)(unsafe.Pointer(unsafe.SliceData(aligned))), n),
		func() { _ = syscall.Munmap(mem) }
}

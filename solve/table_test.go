package solve

import (
	"testing"
	"unsafe"
)

// TestTableLayout checks that every bucket fills one cache line: a probe
// then misses the cache once at most.
func TestTableLayout(t *testing.T) {
	if size := unsafe.Sizeof(bucket{}); size != bucketBytes {
		t.Fatalf("bucket is %d bytes, want %d", size, bucketBytes)
	}
	for _, bytes := range []int{0, 100, 4 << 10, 1 << 20, 3 << 20, DefaultTableBytes} {
		tt := newTable(bytes)
		if addr := uintptr(unsafe.Pointer(&tt.buckets[0])); addr%64 != 0 {
			t.Errorf("newTable(%d): buckets at %#x, not at a cache line", bytes, addr)
		}
		if n := len(tt.buckets); n&(n-1) != 0 || (n > 1 && n*bucketBytes > bytes) {
			t.Errorf("newTable(%d): %d buckets", bytes, n)
		}
	}
}

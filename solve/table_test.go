package solve

import (
	"math/rand"
	"runtime"
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

// TestTableMemory writes the first and last bucket of fresh tables, which
// must read as empty first, and requires a table of a huge page or more
// to start at a huge page on Linux, where it is mapped for huge pages and
// release unmaps it.
func TestTableMemory(t *testing.T) {
	for _, bytes := range []int{4 << 10, 4 << 20} {
		tt := newTable(bytes)
		last := len(tt.buckets) - 1
		for _, i := range []int{0, last} {
			for j := range tt.buckets[i].slots {
				if e := tt.buckets[i].slots[j].load(); e != (entry{}) {
					t.Fatalf("newTable(%d): bucket %d holds %+v", bytes, i, e)
				}
			}
			tt.buckets[i].slots[1].put(entry{own: 1, opp: 2, lower: -4, upper: 4, empties: 9})
			if e := tt.buckets[i].slots[1].load(); e.own != 1 || e.upper != 4 {
				t.Fatalf("newTable(%d): bucket %d reads back %+v", bytes, i, e)
			}
		}
		addr := uintptr(unsafe.Pointer(&tt.buckets[0]))
		mapped := runtime.GOOS == "linux" && bytes >= 2<<20
		if mapped && addr%(2<<20) != 0 {
			t.Errorf("newTable(%d): buckets at %#x, not at a huge page", bytes, addr)
		}
		tt.release()
		tt.release() // a second release does nothing
		if mapped && tt.buckets != nil {
			t.Errorf("newTable(%d): buckets kept after release", bytes)
		}
	}
}

// TestHashSpreads changes one square of random positions at a time (an
// empty square taken by either side, or a disc changing colour) and
// requires the table's index to change almost always, for every square:
// the table's bucket must depend on the whole position.
func TestHashSpreads(t *testing.T) {
	const positions, indexBits = 2000, 16
	rng := rand.New(rand.NewSource(3))
	index := func(own, opp uint64) uint64 { return hash(own, opp) & (1<<indexBits - 1) }
	for sq := range 64 {
		x := uint64(1) << uint(sq)
		same := 0
		for range positions {
			occ := rng.Uint64()
			own := occ & rng.Uint64() &^ x
			opp := occ &^ own &^ x
			base := index(own, opp)
			for _, c := range [][2]uint64{{own | x, opp}, {own, opp | x}} {
				if index(c[0], c[1]) == base {
					same++
				}
			}
			if index(own|x, opp) == index(own, opp|x) {
				same++
			}
		}
		// By chance: 3*positions/2^16, about 0.1.
		if same > 3 {
			t.Errorf("square %d: the index stayed the same %d times in %d changes", sq, same, 3*positions)
		}
	}
}

package packed

import (
	"math/rand/v2"
	"testing"
)

// TestGamma round-trips values of every length through every order,
// mixed with plain fields, and checks the cost gammaLen predicts.
func TestGamma(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type field struct {
		v     uint64
		k, n  uint // order, or width for a plain field
		plain bool
	}
	var fs []field
	var w bitWriter
	var want uint
	for l := uint(0); l <= 64; l++ {
		for k := uint(0); k < 64; k++ {
			v := uint64(0)
			if l > 0 {
				v = 1<<(l-1) | rng.Uint64()&(1<<(l-1)-1)
			}
			fs = append(fs, field{v: v, k: k})
			w.gamma(v, k)
			want += gammaLen(l, k)
			p := field{v: rng.Uint64() & (1<<k - 1), n: k, plain: true}
			fs = append(fs, p)
			w.write64(p.v, p.n)
			want += k
		}
	}
	b := w.bytes()
	if got := uint(len(b)); got != (want+7)/8 {
		t.Fatalf("wrote %d bytes, gammaLen predicts %d bits", got, want)
	}
	var r bitReader
	r.init(b)
	for i, f := range fs {
		var got uint64
		ok := true
		if f.plain {
			got = r.read64(f.n)
		} else {
			got, ok = r.gamma(f.k)
		}
		if !ok || got != f.v {
			t.Fatalf("field %d (%+v): read %d, %v", i, f, got, ok)
		}
	}
	if r.overrun() || !r.exhausted() {
		t.Fatal("reader did not end exactly at the padding")
	}
}

package packed

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// randomWords returns n words of a blob, sorted by side and then as
// 128-bit numbers, with white bits that fit their occupancies: drawn
// from a few occupancies of discs discs each (of two counts if mixed),
// so that words share occupancies, positions and whole words as an
// expansion's do.
func randomWords(rng *rand.Rand, n int, discs int, mixed bool, indexBits uint) []Word {
	occs := make([]uint64, 1+n/8)
	for i := range occs {
		k := discs
		if mixed && i%2 == 1 {
			k++
		}
		for bits.OnesCount64(occs[i]) < k {
			occs[i] |= 1 << rng.IntN(64)
		}
	}
	es := make([]Word, n)
	for i := range es {
		occ := occs[rng.IntN(len(occs))]
		k := bits.OnesCount64(occ)
		white := rng.Uint64() & (1<<k - 1) >> rng.IntN(3) // shared positions now and then
		field := rng.Uint64N(1 << indexBits)
		if rng.IntN(4) == 0 {
			field = 0
		}
		es[i] = Word{Occ: occ, Low: rng.Uint64N(2)<<63 | white<<indexBits | field}
	}
	slices.SortFunc(es, func(a, b Word) int {
		return cmp.Or(cmp.Compare(a.Low>>63, b.Low>>63), cmp.Compare(a.Occ, b.Occ), cmp.Compare(a.Low, b.Low))
	})
	return es
}

// TestAddWords checks that AddWords writes what AddBits writes for each
// distinct word, bit for bit, for every way a word's field names its
// parent, on blocks of any size, cut into segments anywhere, and that
// the run reads back as those edges.
func TestAddWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 7))
	refWays := []WordRefs{
		{Blob: 5},
		{Blob: 5, NoneAtZero: true, Less: 1},
		{Blob: 0, NoneAtZero: true, Less: 0},
		{Blob: 1<<32 - 1},
	}
	for _, discs := range []int{1, 17, 40, 63} {
		for _, mixed := range []bool{false, true} {
			for _, indexBits := range []uint{0, 5, 17} {
				most := discs
				if mixed {
					most++
				}
				if 1+most+int(indexBits) > 64 {
					continue
				}
				for _, block := range []int{0, 1, 2, 3, 7, 64} {
					for _, refs := range refWays {
						name := fmt.Sprintf("discs=%d mixed=%v index=%d block=%d refs=%+v", discs, mixed, indexBits, block, refs)
						whiteWays(t, func(t *testing.T) {
							es := randomWords(rng, 1+rng.IntN(3000), discs, mixed, indexBits)
							checkAddWords(t, name, rng, es, refs, indexBits, block)
						})
					}
				}
			}
		}
	}
}

func checkAddWords(t *testing.T, name string, rng *rand.Rand, es []Word, r WordRefs, indexBits uint, block int) {
	t.Helper()
	r.IndexBits = indexBits
	var want, got bytes.Buffer
	ww, err := NewEdgeWriter(&want, Options{BlockEntries: block})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := NewEdgeWriter(&got, Options{BlockEntries: block})
	if err != nil {
		t.Fatal(err)
	}
	var edges []Edge
	added := 0
	for lo := 0; lo < len(es); {
		hi := min(len(es), lo+1+rng.IntN(len(es)))
		// A segment ends between positions, as an expansion's buckets do.
		for hi < len(es) && es[hi].Occ == es[hi-1].Occ && es[hi].Low>>(indexBits&63) == es[hi-1].Low>>(indexBits&63) {
			hi++
		}
		for i := lo; i < hi; i++ {
			if i > lo && es[i] == es[i-1] {
				continue
			}
			e := es[i]
			side, white := board.Color(e.Low>>63), e.Low&^(1<<63)>>indexBits
			ref := r.ref(e.Low & (1<<indexBits - 1))
			if err := ww.AddBits(side, e.Occ, white, ref); err != nil {
				t.Fatalf("%s: AddBits: %v", name, err)
			}
			edges = append(edges, Edge{Pos: board.Position{Side: side, Occ: e.Occ, White: WhiteDiscs(e.Occ, white)}, Ref: ref})
		}
		n, err := gw.AddWords(es[lo:hi], r)
		if err != nil {
			t.Fatalf("%s: AddWords: %v", name, err)
		}
		added += n
		if rng.IntN(2) == 0 {
			a, err1 := ww.EndSegment()
			b, err2 := gw.EndSegment()
			if a != b || err1 != nil || err2 != nil {
				t.Fatalf("%s: segments end at %d (%v) and %d (%v)", name, a, err1, b, err2)
			}
		}
		lo = hi
	}
	if err := errors.Join(ww.Close(), gw.Close()); err != nil {
		t.Fatal(err)
	}
	if added != len(edges) {
		t.Errorf("%s: AddWords added %d edges, want %d", name, added, len(edges))
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("%s: AddWords wrote %d bytes, AddBits %d, and they differ", name, got.Len(), want.Len())
	}
	back, err := decodeEdges(got.Bytes())
	if err != nil || !slices.Equal(back, edges) {
		t.Fatalf("%s: read back %d edges (%v), want %d", name, len(back), err, len(edges))
	}
}

// TestAddWordsOrder checks that words out of order are refused, within
// a block and between calls.
func TestAddWordsOrder(t *testing.T) {
	r := WordRefs{IndexBits: 4, Blob: 2}
	w := func(occ, low uint64) Word { return Word{Occ: occ, Low: low} }
	tests := []struct {
		name  string
		calls [][]Word
	}{
		{"occupancy falls", [][]Word{{w(0b110, 0x10), w(0b101, 0x10)}}},
		{"white bits fall", [][]Word{{w(0b11, 0x20), w(0b11, 0x10)}}},
		{"parent falls", [][]Word{{w(0b11, 0x12), w(0b11, 0x11)}}},
		{"side falls", [][]Word{{w(0b11, 1<<63), w(0b11, 0x10)}}},
		{"between calls", [][]Word{{w(0b110, 0x10)}, {w(0b101, 0x10)}}},
		{"after a block", [][]Word{{w(0b11, 0x10), w(0b11, 0x20), w(0b11, 0x30), w(0b11, 0x12)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ew, err := NewEdgeWriter(new(bytes.Buffer), Options{BlockEntries: 3})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.calls {
				if _, err = ew.AddWords(c, r); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrOrder) {
				t.Fatalf("got %v, want ErrOrder", err)
			}
		})
	}
}

package packed

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"slices"
	"testing"

	"github.com/reversi-cloud/reversi/board"
)

// refDecode is a plain decoder of the payload of a key block (refs
// false) or an edge block (refs true), written from the layout in
// position.go and ref.go with the bit reader's methods and a deposit a
// bit at a time: the independent implementation that posDecoder.decode,
// with its locals, cursor and fixed-length fast path, is checked against.
func refDecode(payload []byte, count int, refs bool) ([]board.Position, []Ref, error) {
	bad := errors.New("bad")
	var r bitReader
	r.init(payload)
	kOcc := uint(r.read(6))
	var kBlob, kIndex, wBlob, wIndex uint
	if refs {
		kBlob, kIndex, wBlob, wIndex = uint(r.read(6)), uint(r.read(6)), uint(r.read(6)), uint(r.read(6))
		if wBlob > 32 || wIndex > 32 {
			return nil, nil, bad
		}
	}
	var ref Ref
	readRef := func(cont bool) bool {
		if !cont {
			if r.read(1) == 0 {
				ref.Blob = uint32(r.read64(wBlob))
			}
			ref.Index = uint32(r.read64(wIndex))
			return true
		}
		db, ok := r.gamma(kBlob)
		if !ok || db > uint64(^ref.Blob) {
			return false
		}
		if db != 0 {
			ref.Blob += uint32(db)
			ref.Index = uint32(r.read64(wIndex))
			return true
		}
		di, ok := r.gamma(kIndex)
		if !ok || di > uint64(^ref.Index) {
			return false
		}
		ref.Index += uint32(di)
		return true
	}
	side := board.Color(r.read(1))
	occ := r.read64(64)
	k := uint(bits.OnesCount64(occ))
	white := r.read64(k)
	var ps []board.Position
	var rs []Ref
	for i := range count {
		repeat := false
		if i > 0 {
			switch {
			case r.read(1) == 1:
				w := r.read64(k)
				if w <= white {
					return nil, nil, bad
				}
				white = w
			case r.read(1) == 1:
				if !refs {
					return nil, nil, bad
				}
				repeat = true
			default:
				d, ok := r.gamma(kOcc)
				next, carry := bits.Add64(occ, d, 1)
				if !ok || carry != 0 || uint(bits.OnesCount64(next)) != k {
					return nil, nil, bad
				}
				occ, white = next, r.read64(k)
			}
		}
		ps = append(ps, board.Position{Side: side, Occ: occ, White: depositNaive(white, occ)})
		if refs {
			if !readRef(repeat) {
				return nil, nil, bad
			}
			rs = append(rs, ref)
		}
	}
	if r.overrun() || !r.exhausted() {
		return nil, nil, bad
	}
	return ps, rs, nil
}

// depositNaive scatters the low bits of x to the set bits of mask, one
// at a time.
func depositNaive(x, mask uint64) uint64 {
	var r uint64
	for ; mask != 0; mask &= mask - 1 {
		r |= (x & 1) << uint(bits.TrailingZeros64(mask))
		x >>= 1
	}
	return r
}

// decodeBlock runs posDecoder.decode on a payload as the readers do.
func decodeBlock(payload []byte, count int, refs bool) ([]board.Position, []Ref, error) {
	var b bitReader
	b.init(payload)
	var d posDecoder
	d.params(&b)
	if !refs {
		ps, err := d.decodeKeys(&b, count, nil)
		return ps, nil, err
	}
	var rd refDecoder
	if err := rd.params(&b); err != nil {
		return nil, nil, err
	}
	es, err := d.decodeEdges(&b, count, nil, &rd)
	var ps []board.Position
	var rs []Ref
	for _, e := range es {
		ps, rs = append(ps, e.Pos), append(rs, e.Ref)
	}
	return ps, rs, err
}

// checkBlock fails t unless decodeBlock and refDecode agree on a payload:
// the same entries, or both an error (decodeBlock's wrapping ErrCorrupt).
func checkBlock(t *testing.T, payload []byte, count int, refs bool) {
	t.Helper()
	want, wantRefs, wantErr := refDecode(payload, count, refs)
	got, gotRefs, err := decodeBlock(payload, count, refs)
	switch {
	case err != nil && !errors.Is(err, ErrCorrupt):
		t.Fatalf("%d entries: error %v does not wrap ErrCorrupt", count, err)
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%d entries: error %v, the reference's %v", count, err, wantErr)
	case err == nil && (!slices.Equal(got, want) || !slices.Equal(gotRefs, wantRefs)):
		t.Fatalf("%d entries: decoded differently from the reference", count)
	}
}

// blockPayloads returns the payload and count of every block of blob.
func blockPayloads(t testing.TB, blob []byte, kind byte) (payloads [][]byte, counts []int) {
	br := blockReader{r: bytes.NewReader(blob), kind: kind}
	for {
		err := br.next(kindIndex)
		if err == io.EOF {
			return payloads, counts
		}
		if err != nil {
			t.Fatal(err)
		}
		payloads, counts = append(payloads, bytes.Clone(br.data)), append(counts, br.count)
	}
}

// TestDecodeMatchesReference decodes real key and edge blocks, whole and
// with every count from one short to one long, with both decoders.
func TestDecodeMatchesReference(t *testing.T) {
	whiteWays(t, func(t *testing.T) {
		for _, tc := range []struct {
			name string
			blob []byte
			kind byte
		}{
			{"keys", encodeKeys(t, plyPositions(t, 6), Options{BlockEntries: 300}), kindKeys},
			{"edges", encodeEdges(t, expansion(t, 6, 0), Options{BlockEntries: 300}), kindEdges},
			{"edges with 32-bit refs", encodeEdges(t, wideRefEdges(), Options{BlockEntries: 5}), kindEdges},
		} {
			t.Run(tc.name, func(t *testing.T) {
				payloads, counts := blockPayloads(t, tc.blob, tc.kind)
				for i, p := range payloads {
					for _, n := range []int{counts[i] - 1, counts[i], counts[i] + 1} {
						checkBlock(t, p, n, tc.kind == kindEdges)
					}
					if _, _, err := decodeBlock(p, counts[i], tc.kind == kindEdges); err != nil {
						t.Fatalf("block %d: %v", i, err)
					}
				}
			})
		}
	})
}

// wideRefEdges are edges whose refs take the widest fields, 32 bits of
// blob and of index, in every layout of a ref, at every bit alignment.
func wideRefEdges() []Edge {
	var es []Edge
	top := ^uint32(0)
	for i := range uint64(40) {
		p := board.Position{Occ: 1<<(i%64) | 1<<63, White: i % 2 << 63}
		es = append(es,
			Edge{Pos: p, Ref: Ref{Blob: top - uint32(i), Index: top - 7}},
			Edge{Pos: p, Ref: Ref{Blob: top - uint32(i), Index: top}},
			Edge{Pos: p, Ref: Ref{Blob: top, Index: uint32(i)}})
	}
	slices.SortFunc(es, CompareEdges)
	return slices.Compact(es)
}

// FuzzBlockDecode feeds posDecoder.decode and the reference decoder the
// same payloads, from real blocks mutated, with any count.
func FuzzBlockDecode(f *testing.F) {
	for _, kind := range []byte{kindKeys, kindEdges} {
		s := samples(f)
		blob := s["keys"]
		if kind == kindEdges {
			blob = s["edges"]
		}
		payloads, counts := blockPayloads(f, blob, kind)
		for i, p := range payloads[:2] {
			f.Add(p, uint16(counts[i]), kind == kindEdges)
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte, count uint16, edges bool) {
		if count == 0 {
			return // readers refuse empty blocks before decoding
		}
		whiteWays(t, func(t *testing.T) { checkBlock(t, payload, int(count), edges) })
	})
}

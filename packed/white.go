package packed

import (
	"math/bits"
	"unsafe"

	"github.com/reversi-cloud/reversi/board"
)

// The white discs of a position are coded as one bit per occupied
// square: pext(White, Occ), which a deposit over Occ turns back. On a
// processor with fast PDEP and PEXT instructions (bmi2_amd64.go) those do
// it; elsewhere, the loop and the tables below.

// useBMI2 tells the coders to use the instructions. It is a variable so
// that tests check both ways on a machine that has them.
var useBMI2 = fastBMI2

// pext gathers the bits of x at the set bits of mask into the low bits of
// the result, in order: the white discs as one bit per occupied square.
func pext(x, mask uint64) uint64 {
	if useBMI2 {
		return pextBMI2(x, mask)
	}
	return pextBits(x, mask)
}

// WhiteBits returns the white discs of p as blobs code them: one bit per
// occupied square, in order (pext(p.White, p.Occ)). For positions of one
// occupancy they sort as the white discs do.
func WhiteBits(p board.Position) uint64 { return pext(p.White, p.Occ) }

// WhiteDiscs turns the white bits of a position of occupancy occ back
// into its white discs: the inverse of WhiteBits.
func WhiteDiscs(occ, white uint64) uint64 {
	if useBMI2 {
		return pdepBMI2(white, occ)
	}
	return newDepositor(occ).deposit(white)
}

// pextBits is pext a bit at a time.
func pextBits(x, mask uint64) uint64 {
	var r uint64
	for i := uint(0); mask != 0; i++ {
		r |= (x >> uint(bits.TrailingZeros64(mask)) & 1) << i
		mask &= mask - 1
	}
	return r
}

// A depositor is pdep for one mask, which decoders reuse while the
// occupancy stays the same (most entries). It works a byte of the mask at
// a time through depositByte. The bytes are independent, each knowing
// from the popcounts of the bytes below it where its bits of x start, so
// they proceed in parallel, where a loop over the bits of x is a chain of
// dependent steps (and was a sixth of the decoding time).
type depositor struct {
	mask  uint64
	below uint64 // byte i: the number of set bits of mask below byte i
}

func newDepositor(mask uint64) depositor {
	const ones = 0x0101010101010101
	c := mask - mask>>1&(0x55*ones)
	c = c&(0x33*ones) + c>>2&(0x33*ones)
	c = (c + c>>4) & (0x0f * ones) // byte i: the popcount of byte i of mask
	return depositor{mask: mask, below: c * ones << 8}
}

// deposit returns pdep(x, d.mask).
func (d depositor) deposit(x uint64) uint64 {
	return deposit4(d.mask, d.below, x) | deposit4(d.mask>>32, d.below>>32, x)<<32
}

// deposit4 is a half of deposit: the bits of x that go to the low four
// bytes of m, where byte i of below counts the set bits of the whole
// mask below byte i of m. The loop over the bytes is unrolled by hand,
// as the compiler does not.
func deposit4(m, below, x uint64) uint64 {
	b := below
	return uint64(depositByte[byte(m)][byte(x>>(b&63))]) |
		uint64(depositByte[byte(m>>8)][byte(x>>(b>>8&63))])<<8 |
		uint64(depositByte[byte(m>>16)][byte(x>>(b>>16&63))])<<16 |
		uint64(depositByte[byte(m>>24)][byte(x>>(b>>24&63))])<<24
}

// depositByte[m][x] scatters the low bits of x to the set bits of m.
var depositByte = func() (t [256][256]byte) {
	for m := range 256 {
		for x := range 256 {
			var r, xi byte
			for b := range 8 {
				if m>>b&1 != 0 {
					r |= byte(x>>xi&1) << b
					xi++
				}
			}
			t[m][x] = r
		}
	}
	return t
}()

// depositBMI2 reads the first two words of a position as Occ and White:
// these fail to compile if they are not.
const (
	_ = -uint(unsafe.Offsetof(board.Position{}.Occ))
	_ = -uint(unsafe.Offsetof(board.Position{}.White) - 8)
)

// depositPositions turns the white bits of every position of ps into
// its white discs: by PDEP where useBMI2 is set, by the tables
// otherwise (depositAll).
func depositPositions(ps []board.Position) {
	if len(ps) > 0 {
		depositAll(unsafe.Pointer(&ps[0]), len(ps), unsafe.Sizeof(ps[0]))
	}
}

// depositEdges is depositPositions for the positions of edges.
func depositEdges(es []Edge) {
	if len(es) > 0 {
		depositAll(unsafe.Pointer(&es[0].Pos), len(es), unsafe.Sizeof(es[0]))
	}
}

// ExtractWhites replaces the white discs of every position of ps by its
// white bits (WhiteBits): one call for a batch, where WhiteBits is one
// a position. The positions are not positions after that, only the
// occupancies and white bits of their keys.
func ExtractWhites(ps []board.Position) {
	if len(ps) == 0 {
		return
	}
	if useBMI2 {
		extractBMI2(unsafe.Pointer(&ps[0]), len(ps), unsafe.Sizeof(ps[0]))
		return
	}
	for i := range ps {
		ps[i].White = pextBits(ps[i].White, ps[i].Occ)
	}
}

// depositAll deposits the white bits of the n positions at p, stride
// bytes apart.
func depositAll(p unsafe.Pointer, n int, stride uintptr) {
	if useBMI2 {
		depositBMI2(p, n, stride)
		return
	}
	for i := range n {
		pos := (*board.Position)(unsafe.Add(p, uintptr(i)*stride))
		// A depositor for every position: cheaper than a test of
		// whether the occupancy changed, which is as good as random.
		dep := newDepositor(pos.Occ)
		// dep.deposit, spelt out: the method is too big to inline.
		pos.White = deposit4(dep.mask, dep.below, pos.White) | deposit4(dep.mask>>32, dep.below>>32, pos.White)<<32
	}
}

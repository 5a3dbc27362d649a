package packed

import (
	"encoding/binary"
	"math/bits"
)

// bitWriter appends bits to a byte slice, least significant bit first:
// the first bit written is bit 0 of the first byte.
type bitWriter struct {
	buf []byte
	acc uint64 // pending bits, the oldest in bit 0
	nb  uint   // number of pending bits, below 32 between calls
}

// write appends the low w bits of v; w is at most 32 and v has no bits
// above them.
func (w *bitWriter) write(v uint64, n uint) {
	w.acc |= v << w.nb
	w.nb += n
	if w.nb >= 32 {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(w.acc))
		w.acc >>= 32
		w.nb -= 32
	}
}

// write64 appends the low n bits of v for any n up to 64.
func (w *bitWriter) write64(v uint64, n uint) {
	if n > 32 {
		w.write(v&(1<<32-1), 32)
		v >>= 32
		n -= 32
	}
	w.write(v, n)
}

// gamma appends v in the exponential-Golomb code of order k: the length
// n of v>>k in unary (n zeros, then a one), the n-1 bits of v>>k below its
// top bit, then the k low bits of v. It costs 1+k bits for v < 1<<k and
// about 2*log2(v)-k beyond, so one large value costs little more than its
// width.
func (w *bitWriter) gamma(v uint64, k uint) {
	q := v >> k
	n := uint(bits.Len64(q))
	if n == 0 && k < 32 {
		w.write(1|(v&(1<<k-1))<<1, 1+k)
		return
	}
	if n > 0 && 2*n+k <= 32 {
		w.write(1<<n|(q&(1<<(n-1)-1))<<(n+1)|(v&(1<<k-1))<<(2*n), 2*n+k)
		return
	}
	w.unary(n)
	if n > 1 {
		w.write64(q&(1<<(n-1)-1), n-1)
	}
	w.write64(v&(1<<k-1), k)
}

// unary appends n zeros, then a one.
func (w *bitWriter) unary(n uint) {
	for ; n >= 31; n -= 31 {
		w.write(0, 31)
	}
	w.write(1<<n, n+1)
}

// gammaLen is the cost in bits of gamma(v, k) for a v of bits.Len64(v) == l.
func gammaLen(l, k uint) uint {
	if l <= k {
		return 1 + k
	}
	return 2*(l-k) + k
}

// bytes flushes the pending bits, padded with zeros to a whole byte, and
// returns everything written.
func (w *bitWriter) bytes() []byte {
	for ; w.nb > 0; w.nb -= min(w.nb, 8) {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
	}
	return w.buf
}

// reset empties the writer, keeping its buffer.
func (w *bitWriter) reset() { w.buf, w.acc, w.nb = w.buf[:0], 0, 0 }

// bitReader reads what bitWriter wrote. It loads 64 bits from any bit
// offset with one unaligned read, which needs 8 bytes of padding after
// the payload; reading past the end yields zero bits rather than a
// panic, and overrun tells whether that happened, which decoders check
// before they return an entry.
type bitReader struct {
	buf []byte // the payload, then 8 zero bytes
	pos int    // bits read
	end int    // bits in the payload
}

// padding is what bitReader needs after a payload.
const padding = 8

// init readies r to read b, using the capacity after it as padding when
// there is enough (blockReader leaves it) and copying b otherwise.
func (r *bitReader) init(b []byte) {
	if cap(b)-len(b) < padding {
		b = append(make([]byte, 0, len(b)+padding), b...)
	}
	*r = bitReader{buf: b[:len(b)+padding], end: len(b) * 8}
	clear(r.buf[len(b):])
}

// peek returns the next 57 or more bits, in the low bits. Past the end
// of the payload it reads the zero padding: a clamp, cheaper than a
// branch on every code.
func (r *bitReader) peek() uint64 { return peekAt(r.buf, uint(r.pos)) }

// peekAt is peek for a reader of buf at bit pos, for loops that keep the
// position in a local (a register) rather than in the reader.
func peekAt(buf []byte, pos uint) uint64 {
	i := min(pos>>3, uint(len(buf)-padding))
	return binary.LittleEndian.Uint64(buf[i:i+8]) >> (pos & 7)
}

// read returns the next n bits, n at most 56.
func (r *bitReader) read(n uint) uint64 {
	v := r.peek() & (1<<n - 1)
	r.pos += int(n)
	return v
}

// read64 returns the next n bits for any n up to 64.
func (r *bitReader) read64(n uint) uint64 {
	if n > 32 {
		lo := r.read(32)
		return lo | r.read(n-32)<<32
	}
	return r.read(n)
}

// gamma reads a value written by bitWriter.gamma with the same k; ok is
// false for a code of a value that does not fit in 64 bits. It is too
// big for the compiler to inline, so the decoders' inner loops take
// codes from a cursor instead.
func (r *bitReader) gamma(k uint) (v uint64, ok bool) {
	v, used := gammaBits(r.peek(), k)
	if used > 57 {
		return r.gammaLong(k)
	}
	r.pos += int(used)
	return v, true
}

// gammaBits decodes the gamma code of order k at the bottom of x and
// returns its value and length, or a length above 57 for a code that may
// not fit in x. It has no branches on the code's length, which varies
// from one value to the next and so would be mispredicted.
func gammaBits(x uint64, k uint) (v uint64, used uint) {
	n := uint(bits.TrailingZeros64(x)) // 64 if x is 0
	// s bits come before the k low bits: n zeros, a one, then the n-1
	// bits of v>>k below its top bit, so 2n, but 1 when n is 0, which
	// (n-1)>>63 adds without a branch (max(n, 1) compiled to one in
	// large loops). Where the result counts, n < 29 and s and k are
	// below 58; the masks of the shift counts save the compiler its
	// checks for counts of 64 and more.
	s := 2*n + (n-1)>>63
	n &= 63
	// The one and the n-1 bits after it, the one moved up to bit n-1.
	q := (x>>n&(1<<n-1) | 1<<n) >> 1
	return q<<(k&63) | x>>(s&63)&(1<<(k&63)-1), s + k
}

// A cursor reads a payload in a decoding loop that keeps it in locals,
// which the compiler holds in registers where the fields of a bitReader
// would be stored and loaded again around every code. x holds the bits
// from pos on, of which the low avail are valid: one peek holds most
// entries whole, so the codes of an entry are taken from x by shifts,
// and a load (a few cycles) is on the chain of dependent steps from one
// code to the next only where a field does not fit in what is left.
type cursor struct {
	x     uint64
	avail uint
	pos   uint
}

// cursorAt returns a cursor at bit pos of buf, a bitReader's buffer.
func cursorAt(buf []byte, pos uint) cursor {
	return cursor{x: peekAt(buf, pos), avail: 57, pos: pos}
}

// skip advances c past n of its valid bits.
func (c cursor) skip(n uint) cursor {
	return cursor{x: c.x >> (n & 63), avail: c.avail - n, pos: c.pos + n}
}

// gamma reads a gamma code of order k from c, through b where it does
// not fit in c's valid bits. Too big to inline, it serves where a call
// per code is cheap enough; the block loop spells it out.
func (c cursor) gamma(b *bitReader, k uint) (v uint64, next cursor, ok bool) {
	v, used := gammaBits(c.x, k)
	if used <= c.avail {
		return v, c.skip(used), true
	}
	return b.gammaAt(c.pos, k)
}

// gammaAt reads the gamma code at bit pos of r's payload, which did not
// fit in a cursor's valid bits, and returns a cursor after it.
func (r *bitReader) gammaAt(pos uint, k uint) (v uint64, c cursor, ok bool) {
	v, used := gammaBits(peekAt(r.buf, pos), k)
	if used <= 57 {
		return v, cursorAt(r.buf, pos+used), true
	}
	l := bitReader{buf: r.buf, pos: int(pos), end: r.end}
	v, ok = l.gammaLong(k)
	return v, cursorAt(r.buf, uint(l.pos)), ok
}

// readAt reads n bits, up to 64, at bit pos of r's payload, which did
// not fit in a cursor's valid bits, and returns a cursor after them.
func (r *bitReader) readAt(pos uint, n uint) (uint64, cursor) {
	l := bitReader{buf: r.buf, pos: int(pos), end: r.end}
	v := l.read64(n)
	return v, cursorAt(r.buf, uint(l.pos))
}

// gammaLong is gamma for codes longer than one peek.
func (r *bitReader) gammaLong(k uint) (v uint64, ok bool) {
	var n uint
	for {
		z := uint(bits.TrailingZeros64(r.peek()))
		if z < 57 {
			n += z
			r.pos += int(z) + 1
			break
		}
		// A long run of zeros: only an overrun or a huge value gets here.
		n += 57
		r.pos += 57
		if n+k > 64 || r.overrun() {
			return 0, false
		}
	}
	if n+k > 64 {
		return 0, false
	}
	var q uint64
	if n > 0 {
		q = 1<<(n-1) | r.read64(n-1)
	}
	return q<<k | r.read64(k), true
}

// overrun reports whether more bits were read than the payload holds.
func (r *bitReader) overrun() bool { return r.pos > r.end }

// exhausted reports whether everything but the zero padding of the last
// byte has been read, and no more: a well formed payload has no bits to
// spare.
func (r *bitReader) exhausted() bool {
	left := r.end - r.pos
	return left >= 0 && left < 8 && r.read(uint(left)) == 0
}

// lenHist counts values by bits.Len64, to choose a gamma order.
type lenHist [65]uint64

func (h *lenHist) add(v uint64) { h[bits.Len64(v)]++ }

// best returns the gamma order that codes the counted values in the
// fewest bits. The cost of a value depends only on its length, so the
// histogram gives the exact cost of every order; orders beyond the
// longest value only add bits, so the search stops there.
func (h *lenHist) best() uint {
	var lens, counts [65]uint64
	n, top := 0, uint(0)
	for l, c := range h {
		if c != 0 {
			lens[n], counts[n] = uint64(l), c
			n++
			top = uint(l)
		}
	}
	bestK, bestCost := uint(0), ^uint64(0)
	for k := uint(0); k <= top && k < 64; k++ {
		var cost uint64
		for i := range n {
			cost += counts[i] * uint64(gammaLen(uint(lens[i]), k))
		}
		if cost < bestCost {
			bestK, bestCost = k, cost
		}
	}
	return bestK
}

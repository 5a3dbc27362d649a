//go:build amd64 && !purego

package packed

import "unsafe"

// On amd64 the white discs are deposited and extracted by the BMI2
// instructions PDEP and PEXT where the processor has them and runs them
// in a few cycles: Intel from Haswell on, AMD from Zen 3 on. Zen 1 and 2
// (families 0x17 and Hygon's 0x18) have them in microcode, tens to
// hundreds of cycles depending on the mask, slower than the tables of
// rank.go, so there they are not used.
var hasBMI2, fastBMI2 = detectBMI2()

// detectBMI2 reports whether the processor has BMI2, and whether its
// PDEP and PEXT are fast.
func detectBMI2() (has, fast bool) {
	maxLeaf, b, c, d := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false
	}
	if _, b7, _, _ := cpuid(7, 0); b7&(1<<8) == 0 {
		return false, false
	}
	vendor := string(le32(b)) + string(le32(d)) + string(le32(c))
	a1, _, _, _ := cpuid(1, 0)
	family := a1 >> 8 & 0xf
	if family == 0xf {
		family += a1 >> 20 & 0xff
	}
	slow := (vendor == "AuthenticAMD" || vendor == "HygonGenuine") && family < 0x19
	return true, !slow
}

// le32 returns the four bytes of a CPUID register, as the vendor string
// spells them.
func le32(x uint32) []byte { return []byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)} }

// cpuid executes CPUID for leaf and subleaf.
func cpuid(leaf, subleaf uint32) (a, b, c, d uint32)

// pextBMI2 is pext by the PEXT instruction.
//
//go:noescape
func pextBMI2(x, mask uint64) uint64

// pdepBMI2 is pdep by the PDEP instruction.
//
//go:noescape
func pdepBMI2(x, mask uint64) uint64

// depositBMI2 replaces the second word of each of n records, stride
// bytes apart from p on, by PDEP of itself over the first: for
// positions (Occ, then White) it turns the white bits, one per occupied
// square, into the white discs.
//
//go:noescape
func depositBMI2(p unsafe.Pointer, n int, stride uintptr)

// extractBMI2 is depositBMI2's inverse: it replaces the second word of
// each record by PEXT of itself over the first, turning the white discs
// of positions into their white bits.
//
//go:noescape
func extractBMI2(p unsafe.Pointer, n int, stride uintptr)

// extractDeltasBMI2 walks n occupancies from occ by the deltas at dOcc,
// and replaces the white discs at whites under each by PEXT of them over
// it: a key block's white discs turned into its white bits.
//
//go:noescape
func extractDeltasBMI2(occ uint64, dOcc, whites *uint64, n int)

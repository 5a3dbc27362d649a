//go:build amd64 && !purego

#include "textflag.h"

// STRIDED is the body of depositBMI2 and extractBMI2, which differ in
// the instruction INSTR alone: for each of n records, stride bytes apart
// from p on, the second word becomes INSTR of itself over the first.
#define STRIDED(INSTR) \
	MOVQ	p+0(FP), SI \
	MOVQ	n+8(FP), CX \
	MOVQ	stride+16(FP), DX \
	TESTQ	CX, CX \
	JLE	done \
loop: \
	MOVQ	8(SI), BX \
	INSTR	(SI), BX, BX \
	MOVQ	BX, 8(SI) \
	ADDQ	DX, SI \
	DECQ	CX \
	JNZ	loop \
done: \
	RET

// func cpuid(leaf, subleaf uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL	leaf+0(FP), AX
	MOVL	subleaf+4(FP), CX
	CPUID
	MOVL	AX, a+8(FP)
	MOVL	BX, b+12(FP)
	MOVL	CX, c+16(FP)
	MOVL	DX, d+20(FP)
	RET

// func pextBMI2(x, mask uint64) uint64
TEXT ·pextBMI2(SB), NOSPLIT, $0-24
	MOVQ	x+0(FP), AX
	MOVQ	mask+8(FP), BX
	PEXTQ	BX, AX, AX
	MOVQ	AX, ret+16(FP)
	RET

// func pdepBMI2(x, mask uint64) uint64
TEXT ·pdepBMI2(SB), NOSPLIT, $0-24
	MOVQ	x+0(FP), AX
	MOVQ	mask+8(FP), BX
	PDEPQ	BX, AX, AX
	MOVQ	AX, ret+16(FP)
	RET

// func depositBMI2(p unsafe.Pointer, n int, stride uintptr)
TEXT ·depositBMI2(SB), NOSPLIT, $0-24
	STRIDED(PDEPQ)

// func extractBMI2(p unsafe.Pointer, n int, stride uintptr)
TEXT ·extractBMI2(SB), NOSPLIT, $0-24
	STRIDED(PEXTQ)

// func extractDeltasBMI2(occ uint64, dOcc, whites *uint64, n int)
TEXT ·extractDeltasBMI2(SB), NOSPLIT, $0-32
	MOVQ	occ+0(FP), AX
	MOVQ	dOcc+8(FP), SI
	MOVQ	whites+16(FP), DI
	MOVQ	n+24(FP), CX
	TESTQ	CX, CX
	JLE	done
loop:
	ADDQ	(SI), AX
	MOVQ	(DI), BX
	PEXTQ	AX, BX, BX
	MOVQ	BX, (DI)
	ADDQ	$8, SI
	ADDQ	$8, DI
	DECQ	CX
	JNZ	loop
done:
	RET

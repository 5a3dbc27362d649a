//go:build amd64 && !purego

#include "textflag.h"

// func climb(tree []int, pre []prefix, w int, c prefix, n uint) (wOut int, cOut prefix, stop uint)
//
// AX is the climbing run w, BX:CX its prefix c (hi:lo), DX the node n.
// A node or a run out of range stops the climb at node ^0, which replay
// then indexes and panics on.
TEXT ·climb(SB), NOSPLIT, $0-112
	MOVQ	tree_base+0(FP), SI
	MOVQ	pre_base+24(FP), DI
	MOVQ	w+48(FP), AX
	MOVQ	c_hi+56(FP), BX
	MOVQ	c_lo+64(FP), CX
	MOVQ	n+72(FP), DX

loop:
	TESTQ	DX, DX
	JZ	done
	CMPQ	DX, tree_len+8(FP)
	JAE	bad
	MOVQ	(SI)(DX*8), R10 // t, the loser at node n
	CMPQ	R10, pre_len+32(FP)
	JAE	bad
	MOVQ	R10, R11
	SHLQ	$4, R11
	MOVQ	(DI)(R11*1), R12  // its prefix o: hi
	MOVQ	8(DI)(R11*1), R13 // and lo
	CMPQ	R13, CX
	JNE	match
	CMPQ	R12, BX
	JEQ	done // equal prefixes: the whole keys decide

match:
	MOVQ	R13, R11
	SUBQ	CX, R11
	MOVQ	R12, R8
	SBBQ	BX, R8        // borrow: o sorts before c, t beats w
	MOVQ	AX, R9        // the loser is w
	CMOVQCC	R10, R9       // or t if it lost
	CMOVQCS	R10, AX       // and the winner climbs on
	CMOVQCS	R12, BX
	CMOVQCS	R13, CX
	MOVQ	R9, (SI)(DX*8)
	SHRQ	$1, DX
	JMP	loop

bad:
	MOVQ	$-1, DX

done:
	MOVQ	AX, wOut+80(FP)
	MOVQ	BX, cOut_hi+88(FP)
	MOVQ	CX, cOut_lo+96(FP)
	MOVQ	DX, stop+104(FP)
	RET

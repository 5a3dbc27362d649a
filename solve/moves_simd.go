//go:build goexperiment.simd && amd64.v3

package solve

import "simd/archsimd"

// This file is built with GOEXPERIMENT=simd for x86-64-v3 (the Makefile
// sets both on a CPU with AVX2): moves then grows the runs of all four
// directions at once in one 256-bit register, each lane one direction, as
// movesUp and movesDown do for one: about half the time of movesScalar
// (BenchmarkMoves), and the search calls it for every child it orders.

// laneMask holds, for each lane's direction (columns, rows, the two
// diagonals), the opponent discs a run may pass through: not the edge
// columns, except along a column.
var laneMask = [4]uint64{notEdgeCols, ^uint64(0), notEdgeCols, notEdgeCols}

// laneStep and laneStep2 are each lane's step in bits, and twice it.
var laneStep, laneStep2 = [4]uint64{1, 8, 7, 9}, [4]uint64{2, 16, 14, 18}

// moves returns the legal squares of own among empty.
func moves(own, opp, empty uint64) uint64 {
	s, s2 := archsimd.LoadUint64x4(&laneStep), archsimd.LoadUint64x4(&laneStep2)
	mine := archsimd.BroadcastUint64x4(own)
	theirs := archsimd.BroadcastUint64x4(opp).And(archsimd.LoadUint64x4(&laneMask))

	pair := theirs.And(theirs.ShiftLeft(s))
	up := theirs.And(mine.ShiftLeft(s))
	up = up.Or(theirs.And(up.ShiftLeft(s)))
	up = up.Or(pair.And(up.ShiftLeft(s2)))
	up = up.Or(pair.And(up.ShiftLeft(s2)))

	pair = theirs.And(theirs.ShiftRight(s))
	down := theirs.And(mine.ShiftRight(s))
	down = down.Or(theirs.And(down.ShiftRight(s)))
	down = down.Or(pair.And(down.ShiftRight(s2)))
	down = down.Or(pair.And(down.ShiftRight(s2)))

	all := up.ShiftLeft(s).Or(down.ShiftRight(s))
	half := all.GetLo().Or(all.GetHi())
	r := (half.GetElem(0) | half.GetElem(1)) & empty
	// The upper halves cleared, as board's minImage does: without it,
	// each SSE instruction of the search after a call waited on them on
	// Intel processors (BenchmarkEndgame took 16% to 35% longer).
	archsimd.ClearAVXUpperBits()
	return r
}

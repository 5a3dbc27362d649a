//go:build !(goexperiment.simd && amd64.v3)

package solve

// moves returns the legal squares of own among empty.
func moves(own, opp, empty uint64) uint64 { return movesScalar(own, opp, empty) }

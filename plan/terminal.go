package plan

// terminal8x8 is the number of terminal positions (neither side can
// move) among the canonical positions of each ply of 8x8 from the usual
// start, as this project's runs counted them (docs/reference.md): none
// before ply 9.
var terminal8x8 = []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 36, 28, 925, 1321, 26938, 46489}

// terminalAt is the model's terminal positions of a ply of positions
// positions: counted through the plies of terminal8x8, and past them the
// last counted ply's share of its positions. The share moves a great
// deal from ply to ply (3.0e-5 at ply 13, 7.5e-6 at ply 14), and a
// deeper ply can only have more games that have ended; the plan does not
// foresee that, so its target ply's notices past ply 14 are a floor.
func terminalAt(ply int, positions float64) float64 {
	if ply < 0 {
		return 0
	}
	if ply < len(terminal8x8) {
		return float64(terminal8x8[ply])
	}
	last := len(terminal8x8) - 1
	n, _ := positions8x8(last)
	return positions * float64(terminal8x8[last]) / float64(n)
}

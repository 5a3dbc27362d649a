package dedup

// climbGeneric is climb in Go: the matches of replay from node n up to
// the root, run w's prefix c climbing, or up to the first node whose
// loser has a prefix equal to c. It returns the winner and its prefix
// at the root, and 0, or at that node, and the node: there the whole
// keys decide (replay). The compare and swap are branch-free: which run
// wins a match is a coin toss on real data, and the mispredictions cost
// more than the arithmetic (71 against 46 ns per entry for 16 random
// runs). The prefix climbing the path, c, is carried along, not reloaded
// as pre[w] at each level: that load's address waited on the match below
// it, while the loser's prefix, whose run tree[n] names before the
// replay starts, loads ahead. A match compares prefixes, two words, not
// keys, four: the matches are a chain, each waiting for the one below,
// and each word subtracted is a step of it. Equal prefixes are rare (the
// same position from two runs), so the branch on them is all but always
// predicted.
func climbGeneric(tree []int, pre []prefix, w int, c prefix, n uint) (int, prefix, uint) {
	for ; n >= 1; n /= 2 {
		t := tree[n]
		o := pre[t]
		if o == c {
			return w, c, n
		}
		swap := lessPrefix(o, c) // all ones if t beats w
		x := (w ^ t) & int(swap)
		tree[n], w = t^x, w^x
		c.hi ^= (o.hi ^ c.hi) & swap
		c.lo ^= (o.lo ^ c.lo) & swap
	}
	return w, c, 0
}

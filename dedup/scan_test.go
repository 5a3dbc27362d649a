package dedup

import "testing"

// TestTreeChildren checks the tree through which a step starts: from
// node 0, every node of n is reached exactly once, no node has more than
// partFan children, and the depth is the fewest levels of partFan that
// hold n.
func TestTreeChildren(t *testing.T) {
	for _, n := range []int{1, 2, partFan, partFan + 1, partFan + 2, partFan * partFan, partFan*partFan + partFan + 2, 300_000} {
		parent := make([]int, n)
		for i := range parent {
			parent[i] = -1
		}
		depth, level := 0, []int{0}
		reached := 1
		for len(level) > 0 {
			var next []int
			for _, k := range level {
				kids := treeChildren(k, n)
				if len(kids) > partFan {
					t.Fatalf("n %d: node %d has %d children", n, k, len(kids))
				}
				for _, c := range kids {
					if c <= 0 || c >= n || parent[c] >= 0 {
						t.Fatalf("n %d: node %d lists child %d (parent already %d)", n, k, c, parent[max(0, min(c, n-1))])
					}
					parent[c] = k
				}
				reached += len(kids)
				next = append(next, kids...)
			}
			if len(next) > 0 {
				depth++
			}
			level = next
		}
		if reached != n {
			t.Errorf("n %d: %d nodes reached", n, reached)
		}
		// Levels 0..d hold 1 + partFan + ... + partFan^d nodes.
		want, hold := 0, 1
		for size := partFan; hold < n; size *= partFan {
			hold += size
			want++
		}
		if depth != want {
			t.Errorf("n %d: depth %d, want %d", n, depth, want)
		}
	}
}
